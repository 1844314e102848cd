/** A model path naming a .gguf file (any other path is a Hugging Face folder). */
export function isGgufPath(path: string): boolean {
  return path.toLowerCase().endsWith('.gguf');
}
