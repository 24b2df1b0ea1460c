/**
 * The conformance runner for Node:
 *   node build/conformance-node.mjs SCENARIO BASE_URL PROTOCOL [HTTP_VERSION]
 * plays tests/clients/scenario.json against BASE_URL over PROTOCOL (grpc, grpc-web or connect);
 * prints "conformance: passed" and exits 0, or prints the difference and exits 1.
 */

import { readFileSync } from "node:fs";

import { connect } from "../src/node.js";
import type { Protocol } from "../src/index.js";
import { play, type Scenario } from "./scenario.js";

async function main(argv: string[]): Promise<void> {
  const [scenarioPath, baseUrl, protocol, httpVersion] = argv;
  if (!scenarioPath || !baseUrl || !protocol) {
    throw new Error("usage: conformance-node SCENARIO BASE_URL PROTOCOL [HTTP_VERSION]");
  }
  const scenario = JSON.parse(readFileSync(scenarioPath, "utf8")) as Scenario;
  const client = connect({
    baseUrl, protocol: protocol as Protocol, httpVersion: httpVersion === "1.1" ? "1.1" : "2" });
  await play(client, scenario, `typescript-${protocol}`);
  console.log("conformance: passed");
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
