/**
 * What a Connect client that forgot `useBinaryFormat: true` sees from the front door:
 *   node build/json-connect-refusal.mjs BASE_URL
 * calls GetSession with Connect's JSON codec, which the front door refuses (ADR 0100), and
 * prints the error's code name and message as connect-es reports them.
 */

import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

import { ShellExecService } from "../src/gen/shellexec/v1/shell_exec_service_pb.js";

const baseUrl = process.argv[2];
if (baseUrl === undefined) {
  throw new Error("usage: node json-connect-refusal.mjs BASE_URL");
}
const transport = createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false });
try {
  await createClient(ShellExecService, transport).getSession({ sessionId: "ses_unknown" });
  console.log("answered");
} catch (error) {
  const refused = ConnectError.from(error);
  console.log(`${Code[refused.code]}: ${refused.rawMessage}`);
}
