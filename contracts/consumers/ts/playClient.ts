// The code under test of the TypeScript example consumer: what a browser frontend calls to
// play a game against the engine (fetch, JSON in and out). A problem+json answer becomes an
// EngineProblem carrying its `code`, which the frontend branches on.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export class EngineProblem extends Error {
  constructor(readonly status: number, readonly code: string, readonly body: JsonObject) {
    super(`${status} ${code}`);
  }
}

export class PlayClient {
  private readonly base: string;

  constructor(baseUrl: string, game: string) {
    this.base = `${baseUrl.replace(/\/$/, "")}/v1/games/${game}`;
  }

  private async post(path: string, body: JsonObject): Promise<JsonObject> {
    const answer = await fetch(this.base + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    const data = (await answer.json()) as JsonObject;
    if (!answer.ok) {
      throw new EngineProblem(answer.status, String(data.code), data);
    }
    return data;
  }

  deal(deal: string): Promise<JsonObject> {
    return this.post("/deals", { deal });
  }

  move(state: Json, move: Json): Promise<JsonObject> {
    return this.post("/moves", { state, move });
  }

  hint(state: Json): Promise<JsonObject> {
    return this.post("/hint", { state });
  }

  solve(state: Json, maxSeconds: number): Promise<JsonObject> {
    return this.post("/solve", { state, limits: { max_seconds: maxSeconds } });
  }

  replay(deal: string, moves: Json): Promise<JsonObject> {
    return this.post("/replays", { deal, moves });
  }
}
