// Validates MCP messages against the official JSON schema of a protocol revision
// (shared/spec/schema/<revision>.schema.json), with ajv.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// The legacy revisions (a session opened by initialize) and the modern, stateless ones.
export const REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
export const MODERN_REVISIONS = ["2026-07-28"];

const sharedDir = process.env.EMCP_SHARED_DIR ?? new URL("../../../../shared", import.meta.url).pathname;

// What a request's result must be, by method.
const RESULT_OF = {
  initialize: "InitializeResult",
  ping: "EmptyResult",
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
  "resources/list": "ListResourcesResult",
  "resources/templates/list": "ListResourceTemplatesResult",
  "resources/read": "ReadResourceResult",
  "resources/subscribe": "EmptyResult",
  "resources/unsubscribe": "EmptyResult",
  "prompts/list": "ListPromptsResult",
  "prompts/get": "GetPromptResult",
  "completion/complete": "CompleteResult",
  "logging/setLevel": "EmptyResult",
  "server/discover": "DiscoverResult",
  "subscriptions/listen": "SubscriptionsListenResult",
  // The tasks extension (2026-07-28, SEP-2663): lib/tasks-extension.schema.json.
  "tasks/get": "tasks-ext#/$defs/GetTaskResult",
  "tasks/update": "tasks-ext#/$defs/AckResult",
  "tasks/cancel": "tasks-ext#/$defs/AckResult",
};

// The experimental tasks of 2025-11-25 (official schema; the results of the extension's methods
// of the same names, above, differ).
const RESULT_OF_2025_TASKS = {
  "tasks/get": ["GetTaskResult"],
  "tasks/cancel": ["CancelTaskResult"],
  "tasks/list": ["ListTasksResult"],
  // What the call would have returned: every task of ours is a tools/call.
  "tasks/result": ["GetTaskPayloadResult", "CallToolResult"],
};

// Errors with a schema of their own (2026-07-28), by code.
const ERROR_OF = {
  "-32020": "HeaderMismatchError",
  "-32021": "MissingRequiredClientCapabilityError",
  "-32022": "UnsupportedProtocolVersionError",
};

// What a server-sent notification or request must be, by method.
const MESSAGE_OF = {
  "notifications/message": "LoggingMessageNotification",
  "notifications/progress": "ProgressNotification",
  "notifications/resources/updated": "ResourceUpdatedNotification",
  "notifications/resources/list_changed": "ResourceListChangedNotification",
  "notifications/tools/list_changed": "ToolListChangedNotification",
  "notifications/prompts/list_changed": "PromptListChangedNotification",
  "notifications/cancelled": "CancelledNotification",
  "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
  "sampling/createMessage": "CreateMessageRequest",
  "elicitation/create": "ElicitRequest",
  "roots/list": "ListRootsRequest",
  ping: "PingRequest",
  "notifications/tasks": "tasks-ext#/$defs/TaskStatusNotification",
  "notifications/tasks/status": "TaskStatusNotification",  // 2025-11-25
};

const cache = new Map();

function compile(revision) {
  if (cache.has(revision)) return cache.get(revision);
  const schema = JSON.parse(readFileSync(join(sharedDir, "spec/schema", `${revision}.schema.json`), "utf8"));
  const modern = revision >= "2025-11-25";
  const ajv = modern ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(schema, "mcp");
  // The tasks extension (SEP-2663), which has no official schema: transcribed from the SEP.
  if (revision >= "2026-07-28") ajv.addSchema(JSON.parse(readFileSync(new URL("tasks-extension.schema.json", import.meta.url), "utf8")));
  const defs = modern ? "$defs" : "definitions";
  const get = (name) => {
    const v = ajv.getSchema(name.includes("#") ? name : `mcp#/${defs}/${name}`);
    if (!v) throw new Error(`schema ${revision} has no definition ${name}`);
    return v;
  };
  const entry = { get, revision };
  cache.set(revision, entry);
  return entry;
}

/// Returns a list of problems (empty when valid) for one message the server sent. `method` is
/// the method of the request a response answers (undefined for other messages).
export function check(revision, message, method) {
  const { get } = compile(revision);
  const problems = [];
  const run = (name, value) => {
    const v = get(name);
    if (!v(value)) problems.push(`${name}: ${JSON.stringify(v.errors.slice(0, 3))}`);
  };
  if (message.jsonrpc !== "2.0") problems.push("jsonrpc is not 2.0");
  if ("error" in message) {
    run(revision >= "2025-11-25" ? "JSONRPCErrorResponse" : "JSONRPCError", message);
    const special = ERROR_OF[String(message.error?.code)];
    if (special) {
      if (revision < "2026-07-28") problems.push(`error code ${message.error.code} does not exist at ${revision}`);
      else run(special, message);
    }
  } else if ("result" in message) {
    run(revision >= "2025-11-25" ? "JSONRPCResultResponse" : "JSONRPCResponse", message);
    // A multi round-trip request's interim answer (2026-07-28) has a schema of its own.
    // A tools/call answered with a task (the tasks extension) is a CreateTaskResult.
    // At 2025-11-25 a tools/call with params.task is answered with a CreateTaskResult.
    const legacyTasks = revision === "2025-11-25" ? RESULT_OF_2025_TASKS[method] : undefined;
    const names = message.result?.resultType === "input_required" ? ["InputRequiredResult"]
               : message.result?.resultType === "task" && method === "tools/call" ? ["tasks-ext#/$defs/CreateTaskResult"]
               : revision === "2025-11-25" && method === "tools/call" && "task" in message.result ? ["CreateTaskResult"]
               : legacyTasks ?? (RESULT_OF[method] ? [RESULT_OF[method]] : []);
    if (names.length === 0) problems.push(`no result schema known for method ${method}`);
    for (const name of names) run(name, message.result);
  } else if ("method" in message) {
    const name = MESSAGE_OF[message.method];
    if (!name) problems.push(`no schema known for server message ${message.method}`);
    else run(name, message);
  } else {
    problems.push("neither result, error nor method");
  }
  return problems.map((p) => `${revision} ${JSON.stringify(message).slice(0, 300)}: ${p}`);
}
