/** llama3_json: a call is a JSON object, optionally behind the python tag. */
export const PYTHON_TAG = '<|python_tag|>';
export const OBJECT_OPEN = '{';
