/** A short quoted excerpt of model output for warnings. */
export function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? text.slice(0, 77) + '...' : text);
}
