import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, configFromEnv } from "../../server/config.js";
import { main } from "../../cli/main.js";
import { captureOutput } from "../capture.js";

const io = captureOutput();

describe("server settings from the environment", () => {
  it("reads every variable, empty ones as unset", () => {
    const c = configFromEnv({
      SOCIALWORLD_PORT: "3000",
      PORT: "9",
      SOCIALWORLD_HOST: "0.0.0.0",
      SOCIALWORLD_DATA: "/tmp/sw-store",
      SOCIALWORLD_ADMIN_TOKEN: "",
      SOCIALWORLD_DATA_ROOTS: ["/a", "/b"].join(delimiter),
      SOCIALWORLD_POLICIES: ["/p/one", "two=/p/2"].join(delimiter),
      SOCIALWORLD_OPENAI_API_KEY: "sk-local",
    });
    expect(c).toMatchObject({ port: 3000, host: "0.0.0.0", store: "/tmp/sw-store", policies: ["/p/one", "two=/p/2"], openaiApiKey: "sk-local" });
    expect(c.dataRoots).toEqual([resolve("/tmp/sw-store", "datasets"), "/a", "/b"]);
    expect(c.adminToken).toBeUndefined();
    expect(configFromEnv({ PORT: "8080" }).port).toBe(8080);
    expect(configFromEnv({}).port).toBe(2567);
    expect(configFromEnv({}).policies).toEqual([]);
  });

  it("names the variable that is wrong", () => {
    expect(() => configFromEnv({ SOCIALWORLD_PORT: "abc" })).toThrow(ConfigError);
    expect(() => configFromEnv({ SOCIALWORLD_PORT: "abc" })).toThrow('$SOCIALWORLD_PORT: expected a port number (got "abc")');
    expect(() => configFromEnv({ PORT: "70000" })).toThrow('$PORT: a port is 0 to 65535 (got "70000")');
    expect(() => configFromEnv({ SOCIALWORLD_ADMIN_TOKEN: "short" })).toThrow("$SOCIALWORLD_ADMIN_TOKEN: the admin token must have at least 16 characters");
  });

  it("`serve` stops with that message and exit code 2, before starting anything", async () => {
    const before = process.env.SOCIALWORLD_PORT;
    process.env.SOCIALWORLD_PORT = "12.5";
    try {
      expect(await main(["serve", "--no-demo"])).toBe(2);
      expect(io.err).toContain('$SOCIALWORLD_PORT: expected a whole port number (got "12.5")');
    } finally {
      if (before === undefined) delete process.env.SOCIALWORLD_PORT;
      else process.env.SOCIALWORLD_PORT = before;
    }
  });

  it("`serve --api-key K` makes /v1 ask for the key, as $SOCIALWORLD_OPENAI_API_KEY does", async () => {
    const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
    const store = mkdtempSync(join(tmpdir(), "sw-serve-key-"));
    const env = { ...process.env };
    delete env.SOCIALWORLD_OPENAI_API_KEY;
    const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--store", store, "--no-demo", "--api-key", "sk-from-the-flag"], { env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      let out = "";
      const url = await new Promise<string>((found, failed) => {
        child.stdout.on("data", (d) => {
          out += String(d);
          const m = /server on (http:\/\/\S+)/.exec(out);
          if (m) found(m[1]!.replace(/\/$/, ""));
        });
        child.once("exit", (code) => failed(new Error(`serve exited with ${code}: ${out}`)));
      });
      expect((await fetch(`${url}/v1/models`)).status).toBe(401);
      expect((await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer sk-from-the-flag" } })).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }, 30_000);
});
