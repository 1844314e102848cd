/** mistral's markers: every call follows `[TOOL_CALLS]`; v11 and later write `NAME[ARGS]{...}`. */
export const TOOL_CALLS = '[TOOL_CALLS]';
export const ARGS = '[ARGS]';
export const CALL_ID = '[CALL_ID]';
/** The end-of-sequence token's text, present when special tokens are decoded. */
export const EOS = '</s>';
/** What a v11 name may be (the parser trims it). */
export const NAME = /^[A-Za-z0-9_.-]+$/;
