/** The generated shapes of the recommendation measurements (the large one has MovieLens-1M's users and items). */
export const REC_SHAPES = {
  small: { users: 500, items: 200, meanLength: 20 },
  medium: { users: 2000, items: 1000, meanLength: 30 },
  large: { users: 6040, items: 3706, meanLength: 40 },
} as const;
export type RecShape = keyof typeof REC_SHAPES;

/** A --shapes value: shape names separated by commas. */
export const recShapesPattern = new RegExp(`^(${Object.keys(REC_SHAPES).join("|")})(,(${Object.keys(REC_SHAPES).join("|")}))*$`);
