export interface ExpectedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A model output and what the tool parser must make of it. */
export interface ToolCase {
  title: string;
  text: string;
  content: string | null;
  calls: ExpectedCall[];
  /** Each pattern must match a warning; [] means there must be no warning at all. */
  warnings: RegExp[];
}

export interface ToolCorpus {
  parser: string;
  cases: ToolCase[];
}
