/** pythonic: a Python list of calls, `[f(a=1), g()]`, optionally inside the python tags. */
export const PY_START = '<|python_start|>';
export const PY_END = '<|python_end|>';
export const LIST_OPEN = '[';
/** A function name (dotted), and a keyword argument's name. */
export const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
