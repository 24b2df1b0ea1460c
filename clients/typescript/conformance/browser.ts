/**
 * The conformance runner for a browser: loaded as a module script into the page the front door
 * serves, it plays the scenario the test put in `window.conformanceScenario` over gRPC-Web to
 * the page's own origin, and reports with a `conformance` event on window whose detail is
 * "passed" or the error.
 */

import { connect } from "../src/web.js";
import { play, type Scenario } from "./scenario.js";

declare global {
  interface Window { conformanceScenario?: Scenario }
}

async function run(): Promise<string> {
  const scenario = window.conformanceScenario;
  if (scenario === undefined) return "no scenario in window.conformanceScenario";
  await play(connect({ baseUrl: window.location.origin }), scenario, "typescript-browser");
  return "passed";
}

function report(result: string): void {
  window.dispatchEvent(new CustomEvent("conformance", { detail: result }));
}

run().then(report, (error: unknown) => {
  report(String(error instanceof Error ? error.stack : error));
});
