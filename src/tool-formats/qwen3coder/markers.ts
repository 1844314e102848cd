/** qwen3coder's tags: `<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>`. */
export const TOOL_CALL = '<tool_call>';
export const TOOL_CALL_END = '</tool_call>';
export const FUNCTION = '<function=';
export const FUNCTION_END = '</function>';
export const PARAMETER = '<parameter=';
export const PARAMETER_END = '</parameter>';
/** Ends a function's or a parameter's name. */
export const NAME_END = '>';
