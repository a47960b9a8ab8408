/** What a generator or a question maker writes: the files of a benchmark set, and the one `bench --data` reads. */
export interface GeneratedSet {
  /** The file a benchmark reads (`bench --data`). */
  readonly data: string;
  /** Every file, in the order to write them (a ToMi .txt after its .trace: a reader never finds one without the other). */
  readonly files: readonly { readonly path: string; readonly text: string }[];
}
