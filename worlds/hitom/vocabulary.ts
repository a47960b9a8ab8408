/**
 * Words the Hi-ToM generator draws from beyond the shared ones in worlds/core/vocabulary.ts (names,
 * rooms, coloured containers, objects): the room where agents meet to talk, and the distractors
 * in the style of the upstream generator.
 */
export const WAITING_ROOM = "waiting_room";

export const ANIMALS = ["cat", "dog", "monkey", "mouse"] as const;

export const PERSONAL_ITEMS = ["watch", "gloves", "phone"] as const;
