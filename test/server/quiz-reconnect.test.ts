/**
 * A person whose connection drops mid-quiz and who comes back with its reconnection token is sent
 * its open quiz again (the same questions, the same deadline), and can still answer it. A server
 * in a process of its own: the reconnection needs a real client (reconnect.test.ts says why).
 */
import { describe, expect, it } from "vitest";
import type { QuizMessage } from "../../server/protocol.js";
import { serve, simulationWithReservedSeat } from "./child-server.js";
import { recording, roomData, until } from "./raw-client.js";

describe("a person reconnecting mid-quiz", () => {
  it("is sent its open quiz again, and its answer counts", async () => {
    const s = await serve();
    const { url } = await simulationWithReservedSeat(s.base, { world: "tomi", seed: 5, humanSeats: [0], tickMs: 800, turnDeadlineMs: 200, reconnectSeconds: 30, quiz: { questions: 2, deadlineMs: 60_000 } });
    const first = recording(url);
    await until(() => first.messages("quiz").length > 0, 30_000, "the quiz");
    const quiz = first.messages("quiz")[0] as QuizMessage;

    first.ws.terminate();
    const again = recording(`${url}&reconnectionToken=${first.seen.token}`);
    await until(() => again.messages("quiz").length > 0 || again.seen.closed !== undefined, 10_000, "the quiz again");
    expect(again.seen.errors).toEqual([]);
    expect(again.messages("quiz")).toEqual([quiz]);

    // Answered from the new connection, every question: the quiz closes with its result.
    for (const q of quiz.questions) again.ws.send(roomData("quiz_answer", { episode: quiz.episode, id: q.id, answer: q.choices![0]! }));
    await until(() => again.messages("quiz_result").length > 0, 10_000, "the result");
    expect(again.messages("quiz_result")[0]).toMatchObject({ episode: quiz.episode, agent: quiz.agent, asked: quiz.questions.length });
    again.ws.close();
  }, 60_000);
});
