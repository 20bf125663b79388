// Drives an AG-UI endpoint with the official client (@ag-ui/client's HttpAgent) through a
// plan of runs on one thread, printing one JSON line per event received, per failed run
// and per run's end (with the interrupts the client then holds).
//
// node agui_client.mjs CLIENT_MODULE_DIR PLAN_JSON
// PLAN_JSON: {"url", "token", "threadId", "runs": [{"runId", "say"} | {"runId", "resume"}]}
// where "resume" is the payload answering the one interrupt the client holds.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [moduleDir, planText] = process.argv.slice(2);
// An ES module resolves bare names from its own folder, not NODE_PATH: load the client
// from the installed package by its path.
const { HttpAgent } = await import(pathToFileURL(join(moduleDir, "dist", "index.mjs")).href);
const plan = JSON.parse(planText);
const print = (line) => process.stdout.write(JSON.stringify(line) + "\n");

const agent = new HttpAgent({
  url: plan.url,
  threadId: plan.threadId,
  headers: plan.token ? { Authorization: `Bearer ${plan.token}` } : {},
});

for (const [index, run] of plan.runs.entries()) {
  const params = { runId: run.runId };
  if (run.say !== undefined) {
    agent.addMessage({ id: `${run.runId}-user`, role: "user", content: run.say });
  } else {
    params.resume = agent.pendingInterrupts.map((interrupt) => ({
      interruptId: interrupt.id, status: "resolved", payload: run.resume,
    }));
  }
  try {
    await agent.runAgent(params, { onEvent: ({ event }) => print({ run: index, event }) });
  } catch (error) {
    print({ run: index, error: String(error.message), status: error.status ?? null,
            payload: error.payload ?? null });
  }
  print({ run: index, end: true, pendingInterrupts: agent.pendingInterrupts });
}
