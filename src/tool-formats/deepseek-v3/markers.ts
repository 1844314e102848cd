/** deepseek_v3's special tokens around its calls (text here; the model may write them as tokens). */
export const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
export const CALLS_END = '<｜tool▁calls▁end｜>';
export const CALL_BEGIN = '<｜tool▁call▁begin｜>';
export const CALL_END = '<｜tool▁call▁end｜>';
export const SEP = '<｜tool▁sep｜>';
export const FENCE = '```';
