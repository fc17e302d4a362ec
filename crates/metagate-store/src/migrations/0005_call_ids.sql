-- metagate telemetry, schema version 4: each decision names the call it decided, as the
-- document gave its id (an OpenAI tool call id, an Anthropic tool_use id, a Responses call_id,
-- an MCP request id), so the calls of one message can be told apart and joined to outcomes.

ALTER TABLE decisions ADD COLUMN call_id TEXT;
