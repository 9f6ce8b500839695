//! MCP's Tasks extension over streamable HTTP (revision 2026-07-28), as a client without an
//! SDK speaks it: which calls become tasks, polling, cancellation that stops the sandbox,
//! expiry, per-client bounds, code mode's approvals asked through a task, and what a client
//! that is not the task's owner, or sends hostile ids, gets.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{HttpServer, ToolsDir, calls_in_flight_after};

/// A 2026-07-28 client: every request carries its capabilities in `_meta`.
struct Client {
    http: reqwest::Client,
    url: String,
    capabilities: Value,
}

impl Client {
    /// A client of `server` that accepts tasks and can be asked for input.
    fn with_tasks(server: &HttpServer) -> Self {
        Self::from(server, json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}))
    }

    /// A client of `server` that does not accept tasks.
    fn without_tasks(server: &HttpServer) -> Self {
        Self::from(server, json!({"elicitation": {}}))
    }

    fn from(server: &HttpServer, capabilities: Value) -> Self {
        Self { http: reqwest::Client::new(), url: server.url.clone(), capabilities }
    }

    /// The same client, connecting from another loopback address (another client to the server).
    fn connecting_from(mut self, last: u8) -> Self {
        let address = IpAddr::V4(Ipv4Addr::new(127, 0, 0, last));
        self.http = reqwest::Client::builder().local_address(address).build().unwrap();
        self
    }

    /// The JSON-RPC response to `method` with `params` (`result` or `error`).
    async fn request(&self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str).map(str::to_owned);
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let body = request.body(message.to_string()).send().await.unwrap().text().await.unwrap();
        body.lines()
            .filter_map(|line| line.strip_prefix("data:").or(Some(line)))
            .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
            .find(|message| message.get("id") == Some(&json!(7)))
            .unwrap_or_else(|| panic!("no response to {method} in {body}"))
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments})).await
    }

    async fn get(&self, task: &str) -> Value {
        self.request("tasks/get", json!({"taskId": task})).await
    }

    /// Polls task `task` until its status is `status`, for at most `limit`; the last `tasks/get` result.
    async fn until(&self, task: &str, status: &str, limit: Duration) -> Value {
        let until = tokio::time::Instant::now() + limit;
        loop {
            let got = self.get(task).await;
            if got["result"]["status"] == status || tokio::time::Instant::now() >= until {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The id of the task a `tools/call` was answered with.
fn task_id(response: &Value) -> String {
    assert_eq!(response["result"]["resultType"], "task", "a task: {response}");
    response["result"]["taskId"].as_str().expect("a task id").to_owned()
}

/// A folder of the tasks test tools with `policy`.
fn tools(name: &str, policy: &str) -> ToolsDir {
    let dir = ToolsDir::with(
        name,
        &[toolcell_tests::GREET, toolcell_tests::SLOW_COMPUTE, toolcell_tests::FAILING_JOB, toolcell_tests::COUNTER],
    );
    std::fs::write(dir.path().join("toolcell.toml"), policy).unwrap();
    dir
}

async fn serve(dir: &ToolsDir, args: &[&str]) -> HttpServer {
    let mut all = vec!["--tools-dir", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    HttpServer::start(&all).await
}

#[tokio::test]
async fn a_quick_call_is_answered_inline_and_a_long_one_becomes_a_task() {
    let dir = tools("inline", "[tools.slow_compute]\nlimits = { timeout_ms = 60000 }\n");
    let server = serve(&dir, &["--task-after", "300ms"]).await;
    let client = Client::with_tasks(&server);

    let greeted = client.call("greet", json!({"name": "Ada"})).await;
    assert_eq!(greeted["result"]["resultType"], "complete", "{greeted}");
    assert_eq!(greeted["result"]["content"][0]["text"], "\"Hello, Ada!\"");
    let quick = client.call("slow_compute", json!({"seconds": 0})).await;
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");

    let slow = client.call("slow_compute", json!({"seconds": 2, "label": "long"})).await;
    let task = task_id(&slow);
    let created = &slow["result"];
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 600_000);
    assert!(created["pollIntervalMs"].as_u64().is_some_and(|ms| ms > 0), "{created}");
    assert!(created.get("ttl").is_none() && created.get("requestState").is_none(), "{created}");
    // Durable: found at once.
    assert_eq!(client.get(&task).await["result"]["status"], "working");
    let done = client.until(&task, "completed", Duration::from_secs(30)).await;
    assert_eq!(done["result"]["content"][0]["text"], "\"long done after 2 s\"", "{done}");
    assert_eq!(done["result"]["isError"], false);

    // A client that does not accept tasks waits for the result.
    let waited = Client::without_tasks(&server).call("slow_compute", json!({"seconds": 1})).await;
    assert_eq!(waited["result"]["resultType"], "complete", "{waited}");
}

#[tokio::test]
async fn cancelling_a_task_stops_its_sandbox() {
    let dir = tools("cancel", "[tools.slow_compute]\ntask = \"always\"\nlimits = { timeout_ms = 60000 }\n");
    let server = serve(&dir, &[]).await;
    let client = Client::with_tasks(&server);
    let task = task_id(&client.call("slow_compute", json!({"seconds": 60})).await);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let ack = client.request("tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "an empty ack: {ack}");
    let cancelled = client.until(&task, "cancelled", Duration::from_secs(10)).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled.get("result").is_none() && cancelled.get("error").is_none(), "{cancelled}");
    let calls = calls_in_flight_after(&server.base, Duration::from_secs(5)).await;
    assert_eq!(calls["running"], 0, "the sandbox stopped: {calls}");
    // Cancelling an ended task changes nothing.
    let again = client.request("tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}));
    assert_eq!(client.get(&task).await["result"]["status"], "cancelled");
}

#[tokio::test]
async fn a_tool_that_requires_a_task_is_refused_to_clients_without_tasks() {
    let dir = tools("required", "[tools.failing_job]\ntask = \"required\"\n[tools.greet]\ntask = \"never\"\n");
    let server = serve(&dir, &[]).await;

    let refused = Client::without_tasks(&server).call("failing_job", json!({})).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{refused}"
    );

    let client = Client::with_tasks(&server);
    let task = task_id(&client.call("failing_job", json!({})).await);
    // A tool's failure is a completed task whose result is an error the model reads.
    let ended = client.until(&task, "completed", Duration::from_secs(30)).await;
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    assert_eq!(ended["result"]["_meta"]["toolcell/error"]["kind"], "tool_failed", "{ended}");
    assert!(ended["result"]["content"][0]["text"].as_str().unwrap().contains("the job failed"), "{ended}");
    // `never`: answered inline even to a client that accepts tasks.
    assert_eq!(client.call("greet", json!({"name": "x"})).await["result"]["resultType"], "complete");
    // The legacy `task` parameter changes nothing.
    let legacy =
        client.request("tools/call", json!({"name": "greet", "arguments": {"name": "y"}, "task": {"ttl": 1}})).await;
    assert_eq!(legacy["result"]["resultType"], "complete", "{legacy}");
}

#[tokio::test]
async fn tasks_belong_to_their_client_and_are_bounded_per_client() {
    let dir = tools("owners", "[tools.slow_compute]\ntask = \"required\"\nlimits = { timeout_ms = 60000 }\n");
    let server = serve(&dir, &["--max-tasks-per-client", "2"]).await;
    let owner = Client::with_tasks(&server);
    let first = task_id(&owner.call("slow_compute", json!({"seconds": 60})).await);
    task_id(&owner.call("slow_compute", json!({"seconds": 60})).await);
    let third = owner.call("slow_compute", json!({"seconds": 60})).await;
    let message = third["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("this client holds 2 tasks, its limit"), "{third}");

    // Another client neither sees nor cancels the owner's task, and has its own share.
    let other = Client::with_tasks(&server).connecting_from(2);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let mut params = json!({"taskId": first});
        if method == "tasks/update" {
            params["inputResponses"] = json!({});
        }
        let refused = other.request(method, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
    }
    assert_eq!(owner.get(&first).await["result"]["status"], "working", "still running");
    let theirs = task_id(&other.call("slow_compute", json!({"seconds": 60})).await);
    for task in [&first, &theirs] {
        let owned_by = if *task == theirs { &other } else { &owner };
        owned_by.request("tasks/cancel", json!({"taskId": task})).await;
    }
}

#[tokio::test]
async fn an_expired_task_is_forgotten_and_its_call_stopped() {
    let dir = tools("expiry", "[tools.slow_compute]\ntask = \"always\"\nlimits = { timeout_ms = 60000 }\n");
    let server = serve(&dir, &["--task-ttl", "1s", "--stateless"]).await;
    let client = Client::with_tasks(&server);
    let task = task_id(&client.call("slow_compute", json!({"seconds": 60})).await);
    assert_eq!(client.get(&task).await["result"]["ttlMs"], 1000);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gone = client.get(&task).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert!(gone["error"]["message"].as_str().unwrap().contains("kept for their ttlMs"), "{gone}");
    let calls = calls_in_flight_after(&server.base, Duration::from_secs(5)).await;
    assert_eq!(calls["running"], 0, "the expired task's call stopped: {calls}");
}

#[tokio::test]
async fn a_program_in_a_task_waits_for_approval_and_resumes_with_the_answer() {
    let dir = tools("approval", "[tools.counter]\napprove = true\n");
    let server = serve(&dir, &["--code-mode", "also"]).await;
    let program = json!({"code": "print(tools.counter())\nprint(tools.greet(name='Ada'))"});

    for (answer, printed) in [(true, "1\nHello, Ada!\n"), (false, "denied")] {
        let client = Client::with_tasks(&server);
        let task = task_id(&client.call("execute", program.clone()).await);
        let asking = client.until(&task, "input_required", Duration::from_secs(60)).await;
        let requests = asking["inputRequests"].as_object().expect("input requests");
        assert_eq!(requests.len(), 1, "{asking}");
        let (key, request) = requests.iter().next().unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert!(request["params"]["message"].as_str().unwrap().contains("`counter`"), "{request}");

        let responses = json!({key: {"action": "accept", "content": {"approve": answer}}});
        let ack = client.request("tasks/update", json!({"taskId": task, "inputResponses": responses})).await;
        assert_eq!(ack["result"], json!({"resultType": "complete"}));
        let done = client.until(&task, "completed", Duration::from_secs(60)).await;
        let stdout = done["result"]["structuredContent"]["stdout"].as_str().unwrap_or_default().to_owned();
        let text = done["result"].to_string();
        assert!(stdout.contains(printed) || text.contains(printed), "{answer}: {done}");
    }

    // A client that cannot be asked gets the pause as the result.
    let mute = Client::from(&server, json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let task = task_id(&mute.call("execute", program).await);
    let ended = mute.until(&task, "completed", Duration::from_secs(60)).await;
    assert_eq!(ended["result"]["_meta"]["toolcell/error"]["kind"], "approval_required", "{ended}");
}

#[tokio::test]
async fn hostile_task_requests_get_short_errors_that_say_what_to_do() {
    let dir = tools("hostile", "");
    let server = serve(&dir, &["--code-mode", "also"]).await;
    let client = Client::with_tasks(&server);

    let huge = "x".repeat(10_000);
    let unknown = client.get(&huge).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown.to_string().len() < 2_000, "the error does not echo the whole id");
    let update = client.request("tasks/update", json!({"taskId": "nope", "inputResponses": {"k": 1}})).await;
    assert_eq!(update["error"]["code"], -32602, "{update}");
    for method in ["tasks/result", "tasks/list"] {
        let removed = client.request(method, json!({"taskId": "nope"})).await;
        assert_eq!(removed["error"]["code"], -32601, "{method}: {removed}");
    }
    let without = Client::without_tasks(&server).get("nope").await;
    assert_eq!(without["error"]["code"], -32021, "{without}");
    // `search` is never a task.
    let found = client.call("search", json!({"query": "greet"})).await;
    assert_eq!(found["result"]["resultType"], "complete", "{found}");
}

#[tokio::test]
async fn a_protocol_error_inside_a_task_ends_it_failed() {
    let dir = tools("failed", "[tools.counter]\napprove = true\n");
    let server = serve(&dir, &["--code-mode", "also"]).await;
    let client = Client::with_tasks(&server);
    // A retry of a paused program whose token was forged: as a task, its refusal is the
    // task's error, not a result.
    let approval = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let forged = json!({"name": "execute", "arguments": {"code": "tools.counter()"}, "requestState": "forged.token",
        "inputResponses": approval});
    let task = task_id(&client.request("tools/call", forged).await);
    let failed = client.until(&task, "failed", Duration::from_secs(30)).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32602, "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");
    assert!(failed["statusMessage"].as_str().is_some_and(|message| !message.is_empty()), "{failed}");
}
