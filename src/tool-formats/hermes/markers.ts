/** hermes wraps each call's JSON object in these tags. */
export const OPEN = '<tool_call>';
export const CLOSE = '</tool_call>';
