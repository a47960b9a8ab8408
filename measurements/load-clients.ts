/**
 * Which spectators each worker thread of a load script connects (measurements/load-spectators.ts):
 * client n watches room n % rooms, and each room's clients are in one worker, so that a room's
 * decoding clients and its light ones share a thread (the light ones are matched to the timesteps
 * the decoding ones saw there).
 */
export function clientsOfWorker(spectators: number, rooms: number, workers: number, worker: number): number[] {
  return Array.from({ length: spectators }, (_, n) => n).filter((n) => (n % rooms) % workers === worker);
}
