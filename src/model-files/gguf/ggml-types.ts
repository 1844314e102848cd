/**
 * The ggml tensor types a GGUF file may name, with their block layout.
 *
 * A ggml type packs `blockElements` consecutive values of a row (along ne0,
 * the innermost dimension) into `blockBytes` bytes. Ids and sizes are ggml's
 * (ggml.h `enum ggml_type`, ggml.c `type_traits`). Types weft can load are
 * marked `loadable`; the others are listed so a file using them is reported
 * as an unsupported type rather than as a corrupt file.
 */

export interface GgmlType {
  readonly id: number;
  readonly name: string;
  readonly blockElements: number;
  readonly blockBytes: number;
  /** The native loader takes this dtype string (F32/F16/BF16 convert; the quantized ones stay packed). */
  readonly loadable: boolean;
}

const table: readonly GgmlType[] = [
  { id: 0, name: 'F32', blockElements: 1, blockBytes: 4, loadable: true },
  { id: 1, name: 'F16', blockElements: 1, blockBytes: 2, loadable: true },
  { id: 2, name: 'Q4_0', blockElements: 32, blockBytes: 18, loadable: true },
  { id: 3, name: 'Q4_1', blockElements: 32, blockBytes: 20, loadable: false },
  { id: 6, name: 'Q5_0', blockElements: 32, blockBytes: 22, loadable: false },
  { id: 7, name: 'Q5_1', blockElements: 32, blockBytes: 24, loadable: false },
  { id: 8, name: 'Q8_0', blockElements: 32, blockBytes: 34, loadable: true },
  { id: 9, name: 'Q8_1', blockElements: 32, blockBytes: 36, loadable: false },
  { id: 10, name: 'Q2_K', blockElements: 256, blockBytes: 84, loadable: false },
  { id: 11, name: 'Q3_K', blockElements: 256, blockBytes: 110, loadable: false },
  { id: 12, name: 'Q4_K', blockElements: 256, blockBytes: 144, loadable: true },
  { id: 13, name: 'Q5_K', blockElements: 256, blockBytes: 176, loadable: false },
  { id: 14, name: 'Q6_K', blockElements: 256, blockBytes: 210, loadable: true },
  { id: 15, name: 'Q8_K', blockElements: 256, blockBytes: 292, loadable: false },
  { id: 16, name: 'IQ2_XXS', blockElements: 256, blockBytes: 66, loadable: false },
  { id: 17, name: 'IQ2_XS', blockElements: 256, blockBytes: 74, loadable: false },
  { id: 18, name: 'IQ3_XXS', blockElements: 256, blockBytes: 98, loadable: false },
  { id: 19, name: 'IQ1_S', blockElements: 256, blockBytes: 50, loadable: false },
  { id: 20, name: 'IQ4_NL', blockElements: 32, blockBytes: 18, loadable: false },
  { id: 21, name: 'IQ3_S', blockElements: 256, blockBytes: 110, loadable: false },
  { id: 22, name: 'IQ2_S', blockElements: 256, blockBytes: 82, loadable: false },
  { id: 23, name: 'IQ4_XS', blockElements: 256, blockBytes: 136, loadable: false },
  { id: 24, name: 'I8', blockElements: 1, blockBytes: 1, loadable: false },
  { id: 25, name: 'I16', blockElements: 1, blockBytes: 2, loadable: false },
  { id: 26, name: 'I32', blockElements: 1, blockBytes: 4, loadable: false },
  { id: 27, name: 'I64', blockElements: 1, blockBytes: 8, loadable: false },
  { id: 28, name: 'F64', blockElements: 1, blockBytes: 8, loadable: false },
  { id: 29, name: 'IQ1_M', blockElements: 256, blockBytes: 56, loadable: false },
  { id: 30, name: 'BF16', blockElements: 1, blockBytes: 2, loadable: true },
  { id: 34, name: 'TQ1_0', blockElements: 256, blockBytes: 54, loadable: false },
  { id: 35, name: 'TQ2_0', blockElements: 256, blockBytes: 66, loadable: false },
  { id: 39, name: 'MXFP4', blockElements: 32, blockBytes: 17, loadable: false },
];

const byId = new Map(table.map((t) => [t.id, t]));
const byName = new Map(table.map((t) => [t.name, t]));

/** The type with this id, or undefined for an id ggml does not define (or that we do not know). */
export function ggmlTypeById(id: number): GgmlType | undefined {
  return byId.get(id);
}

export function ggmlTypeByName(name: string): GgmlType | undefined {
  return byName.get(name);
}

/** The dtypes weft loads from GGUF. */
export const LOADABLE_GGML_TYPES: readonly string[] = table.filter((t) => t.loadable).map((t) => t.name);

/** Bytes of one row of `elements` values, or undefined when the row is not a whole number of blocks. */
export function ggmlRowBytes(type: GgmlType, elements: number): number | undefined {
  if (elements % type.blockElements !== 0) return undefined;
  return (elements / type.blockElements) * type.blockBytes;
}
