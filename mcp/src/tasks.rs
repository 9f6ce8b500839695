//! MCP's Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a `tools/call` answered
//! with a task the client polls (`tasks/get`), answers questions of (`tasks/update`) and
//! cancels (`tasks/cancel`), instead of with its result.
//!
//! [`Tasks`] is the server's one store of them, shared by every connection: bounded in total
//! and per client, each task kept for its `ttlMs` from creation and then forgotten (and
//! stopped, if still running). A task belongs to the client (address) that created it; its
//! id, 122 random bits, is never listed. Tasks live in the process that created them: behind
//! a load balancer, `tasks/*` must reach that replica.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, ErrorCode, InputRequest, InputRequests, InputResponses, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::oauth::Caller;
use crate::peers::Peer;

/// How `toolcell serve` runs calls as tasks, for clients that accept them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// A call of a tool whose policy leaves `task` unset ("optional") that runs longer than
    /// this becomes a task; a quicker one is answered with its result. Default: 1 s.
    pub after: Duration,
    /// How long a task is kept from its creation (`ttlMs`); a task still running then is
    /// stopped. Default: 10 minutes.
    pub ttl: Duration,
    /// How often clients are asked to poll (`pollIntervalMs`). Default: 500 ms.
    pub poll_interval: Duration,
    /// Tasks one client (an IPv4 address, an IPv6 /64) may hold, running or kept. Default: 16.
    pub max_per_client: usize,
    /// Tasks the server holds, running or kept. Default: 256.
    pub max_total: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            after: Duration::from_secs(1),
            ttl: Duration::from_secs(600),
            poll_interval: Duration::from_millis(500),
            max_per_client: 16,
            max_total: 256,
        }
    }
}

/// How a task's work ended. Work stopped by `tasks/cancel` ends the task `cancelled`,
/// whatever it returns.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The call's result, a tool error included (`completed`).
    Result(CallToolResult),
    /// A protocol error: what the call would have answered without a task (`failed`).
    Error(ErrorData),
}

/// Whose a task is: the client's address and, with OAuth, the caller its token names (callers
/// behind one proxy share an address, never a task).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    peer: Peer,
    /// The caller's subject and client, hashed with this process's key; 0 without OAuth.
    caller: u64,
}

impl Owner {
    pub(crate) fn new(peer: Peer, caller: Option<&Caller>) -> Self {
        Self { peer, caller: Caller::key(caller) }
    }
}

/// Every task of the server.
#[derive(Debug)]
pub(crate) struct Tasks {
    limits: TaskLimits,
    store: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    task: Task,
    owner: Owner,
    expires: Instant,
    /// Questions waiting for the client's answer, by key.
    asked: BTreeMap<String, Question>,
    /// Questions asked so far, for unique keys.
    questions: u64,
    /// The end, once the work is over.
    end: Option<TaskPayload>,
    /// Stops the work (`tasks/cancel`, expiry).
    stop: CancellationToken,
}

#[derive(Debug)]
struct Question {
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

impl Tasks {
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self { limits, store: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn limits(&self) -> &TaskLimits {
        &self.limits
    }

    fn store(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new task of `owner`, its work stopped through `stop`: `tasks/get` finds it from now
    /// on. Its work starts with [`NewTask::run`].
    ///
    /// # Errors
    /// When the client or the server holds as many tasks as it may.
    pub(crate) fn create(self: &Arc<Self>, owner: Owner, stop: CancellationToken) -> Result<NewTask, ErrorData> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = current_timestamp();
        let mut task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now);
        task.ttl_ms = Some(millis(self.limits.ttl));
        task.poll_interval_ms = Some(millis(self.limits.poll_interval).max(1));
        let mut store = self.store();
        sweep(&mut store);
        self.check_room(&store, owner)?;
        let entry = Entry {
            task: task.clone(),
            owner,
            expires: Instant::now() + self.limits.ttl,
            asked: BTreeMap::new(),
            questions: 0,
            end: None,
            stop: stop.clone(),
        };
        store.insert(id.clone(), entry);
        Ok(NewTask { task, input: TaskInput { tasks: Arc::clone(self), id, stop } })
    }

    /// Refuses a task past the client's or the server's share.
    fn check_room(&self, store: &HashMap<String, Entry>, owner: Owner) -> Result<(), ErrorData> {
        let held = store.values().filter(|entry| entry.owner == owner).count();
        if held >= self.limits.max_per_client {
            return Err(too_many(format!(
                "this client holds {held} tasks, its limit: wait for them to end (tasks/get), cancel those it no \
                 longer needs (tasks/cancel), or ask the operator to raise --max-tasks-per-client"
            )));
        }
        if store.len() >= self.limits.max_total {
            return Err(too_many(format!(
                "this server holds {} tasks, its limit: retry once some have ended, or ask the operator to raise \
                 --max-tasks",
                store.len()
            )));
        }
        Ok(())
    }

    /// Records how the work of task `id` ended (unless it expired meanwhile).
    fn finish(&self, id: &str, outcome: Outcome) {
        let mut store = self.store();
        let Some(entry) = store.get_mut(id) else { return };
        entry.asked.clear();
        entry.end = Some(match outcome {
            _ if entry.stop.is_cancelled() => TaskPayload::Cancelled,
            Outcome::Result(result) => TaskPayload::Completed { result: object(serde_json::to_value(&result)) },
            Outcome::Error(error) => TaskPayload::Failed { error: object(serde_json::to_value(&error)) },
        });
        if let Some(TaskPayload::Failed { error }) = &entry.end {
            entry.task.status_message = error.get("message").and_then(Value::as_str).map(str::to_owned);
        }
        entry.task.last_updated_at = current_timestamp();
    }

    /// `tasks/get`: the task as it is now.
    ///
    /// # Errors
    /// `-32602` when `owner` has no task `id` here.
    pub(crate) fn get(&self, id: &str, owner: Owner) -> Result<DetailedTask, ErrorData> {
        let mut store = self.store();
        sweep(&mut store);
        let entry = owned(&mut store, id, owner)?;
        let payload = match (&entry.end, entry.asked.is_empty()) {
            (Some(end), _) => end.clone(),
            (None, true) => TaskPayload::Working,
            (None, false) => TaskPayload::InputRequired {
                input_requests: entry
                    .asked
                    .iter()
                    .map(|(key, question)| (key.clone(), question.request.clone()))
                    .collect::<InputRequests>(),
            },
        };
        Ok(DetailedTask::new(entry.task.clone(), payload))
    }

    /// `tasks/update`: answers to the task's questions; keys it did not ask (or asked and
    /// had answered) are ignored, as the extension says.
    ///
    /// # Errors
    /// `-32602` when `owner` has no task `id` here.
    pub(crate) fn update(&self, id: &str, owner: Owner, answers: InputResponses) -> Result<(), ErrorData> {
        let mut store = self.store();
        sweep(&mut store);
        let entry = owned(&mut store, id, owner)?;
        for (key, answer) in answers {
            if let Some(question) = entry.asked.remove(&key) {
                // The work stopped waiting (cancelled): nothing to deliver.
                let _ = question.answer.send(answer);
                entry.task.last_updated_at = current_timestamp();
            }
        }
        Ok(())
    }

    /// `tasks/cancel`: stops the work (the sandbox within one epoch tick); the task ends
    /// `cancelled`. A task that already ended stays as it ended.
    ///
    /// # Errors
    /// `-32602` when `owner` has no task `id` here.
    pub(crate) fn cancel(&self, id: &str, owner: Owner) -> Result<(), ErrorData> {
        let mut store = self.store();
        sweep(&mut store);
        let entry = owned(&mut store, id, owner)?;
        if entry.end.is_none() {
            entry.stop.cancel();
            entry.asked.clear();
            entry.task.last_updated_at = current_timestamp();
        }
        Ok(())
    }

    /// Asks task `id`'s client a question; its answer, or `None` once the task is cancelled
    /// or gone.
    async fn ask(&self, id: &str, request: InputRequest) -> Option<Value> {
        let (answer, answered) = oneshot::channel();
        {
            let mut store = self.store();
            let entry = store.get_mut(id)?;
            entry.questions += 1;
            let key = format!("input-{}", entry.questions);
            entry.asked.insert(key, Question { request, answer });
            entry.task.last_updated_at = current_timestamp();
        }
        answered.await.ok()
    }
}

/// A task just created, its work not started.
#[derive(Debug)]
pub(crate) struct NewTask {
    task: Task,
    input: TaskInput,
}

impl NewTask {
    /// Runs `work` as the task; the task as created.
    pub(crate) fn run<F, W>(self, work: W) -> Task
    where
        W: FnOnce(TaskInput) -> F,
        F: Future<Output = Outcome> + Send + 'static,
    {
        let (tasks, id) = (Arc::clone(&self.input.tasks), self.input.id.clone());
        let work = work(self.input);
        tokio::spawn(async move {
            let outcome = work.await;
            tasks.finish(&id, outcome);
        });
        self.task
    }
}

/// What a task's work may do besides running: ask its client, and see it stopped.
#[derive(Debug)]
pub(crate) struct TaskInput {
    tasks: Arc<Tasks>,
    id: String,
    stop: CancellationToken,
}

impl TaskInput {
    /// Asks the client (it sees `input_required` and the request in `tasks/get`) and waits for
    /// its `tasks/update`; `None` when the task is cancelled or expires first.
    pub(crate) async fn ask(&self, request: InputRequest) -> Option<Value> {
        tokio::select! {
            answer = self.tasks.ask(&self.id, request) => answer,
            () = self.stop.cancelled() => None,
        }
    }
}

/// Forgets the tasks past their time, stopping those still running.
fn sweep(store: &mut HashMap<String, Entry>) {
    let now = Instant::now();
    store.retain(|_, entry| {
        let keep = entry.expires > now;
        if !keep {
            entry.stop.cancel();
        }
        keep
    });
}

/// Task `id` of `owner`: another client's task is as unknown as one that never was.
fn owned<'a>(store: &'a mut HashMap<String, Entry>, id: &str, owner: Owner) -> Result<&'a mut Entry, ErrorData> {
    match store.get_mut(id) {
        Some(entry) if entry.owner == owner => Ok(entry),
        _ => Err(unknown_task(id)),
    }
}

/// The longest task id an error quotes: the id is the client's, of any length.
const MAX_QUOTED_ID_BYTES: usize = 64;

fn unknown_task(id: &str) -> ErrorData {
    let id = toolcell_schema::words::truncated(id, MAX_QUOTED_ID_BYTES);
    ErrorData::invalid_params(
        format!(
            "Failed to retrieve task: no task `{id}` here. Tasks are kept for their ttlMs from creation, on the \
             server process that created them, for the client that created them: call the tool again if it \
             expired; behind a load balancer, send tasks/* to the replica that answered the tools/call"
        ),
        Some(json!({ "taskId": id })),
    )
}

fn too_many(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, message, Some(json!({ "reason": "too many tasks" })))
}

/// A result or error as the JSON object a task carries.
fn object(value: serde_json::Result<Value>) -> JsonObject {
    match value {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn limits() -> TaskLimits {
        TaskLimits { max_per_client: 2, max_total: 3, ..TaskLimits::default() }
    }

    fn client(last: u8) -> Owner {
        Owner::new(Peer::of(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))), None)
    }

    fn start_waiting(tasks: &Arc<Tasks>, owner: Owner) -> Result<Task, ErrorData> {
        let stop = CancellationToken::new();
        let until = stop.clone();
        Ok(tasks.create(owner, stop)?.run(move |_| async move {
            until.cancelled().await;
            Outcome::Error(ErrorData::internal_error("stopped", None))
        }))
    }

    #[tokio::test]
    async fn tasks_are_bounded_per_client_and_in_total() {
        let tasks = Arc::new(Tasks::new(limits()));
        start_waiting(&tasks, client(1)).unwrap();
        start_waiting(&tasks, client(1)).unwrap();
        let refused = start_waiting(&tasks, client(1)).unwrap_err();
        assert!(refused.message.contains("this client holds 2 tasks"), "{}", refused.message);
        start_waiting(&tasks, client(2)).unwrap();
        let refused = start_waiting(&tasks, client(3)).unwrap_err();
        assert!(refused.message.contains("this server holds 3 tasks"), "{}", refused.message);
    }

    #[tokio::test]
    async fn another_clients_task_is_unknown_and_cancel_stops_the_work() {
        let tasks = Arc::new(Tasks::new(limits()));
        let task = start_waiting(&tasks, client(1)).unwrap();
        assert_eq!(tasks.get(&task.task_id, client(2)).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        assert_eq!(tasks.cancel(&task.task_id, client(2)).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        assert_eq!(tasks.get(&task.task_id, client(1)).unwrap().task.status, TaskStatus::Working);
        tasks.cancel(&task.task_id, client(1)).unwrap();
        for _ in 0..100 {
            if tasks.get(&task.task_id, client(1)).unwrap().task.status == TaskStatus::Cancelled {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the task did not end cancelled");
    }

    #[tokio::test]
    async fn two_oauth_callers_behind_one_address_never_share_a_task() {
        let tasks = Arc::new(Tasks::new(limits()));
        let caller = |subject: &str| Caller { subject: Some(subject.to_owned()), client_id: None, scopes: Vec::new() };
        let proxy = Peer::of(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9)));
        let (alice, mallory) = (Owner::new(proxy, Some(&caller("alice"))), Owner::new(proxy, Some(&caller("mallory"))));
        let task = start_waiting(&tasks, alice).unwrap();
        assert_eq!(tasks.get(&task.task_id, mallory).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        assert_eq!(tasks.get(&task.task_id, Owner::new(proxy, None)).unwrap_err().code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            tasks.get(&task.task_id, Owner::new(proxy, Some(&caller("alice")))).unwrap().task.status,
            TaskStatus::Working
        );
        tasks.cancel(&task.task_id, alice).unwrap();
    }

    #[tokio::test]
    async fn an_expired_task_is_forgotten_and_stopped() {
        let tasks = Arc::new(Tasks::new(TaskLimits { ttl: Duration::from_millis(50), ..limits() }));
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tasks.create(client(1), stop).unwrap().run(|_| std::future::pending());
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(tasks.get(&task.task_id, client(1)).is_err());
        assert!(stopped.is_cancelled(), "the expired task's work was stopped");
        // Its place is free again.
        start_waiting(&tasks, client(1)).unwrap();
        start_waiting(&tasks, client(1)).unwrap();
    }

    #[tokio::test]
    async fn questions_wait_for_their_answers_and_unknown_keys_are_ignored() {
        let tasks = Arc::new(Tasks::new(limits()));
        let question: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .unwrap();
        let task = tasks.create(client(1), CancellationToken::new()).unwrap().run(move |input| async move {
            let answer = input.ask(question).await;
            Outcome::Result(CallToolResult::success(vec![rmcp::model::ContentBlock::text(format!("{answer:?}"))]))
        });
        let mut asked = None;
        for _ in 0..100 {
            if let TaskPayload::InputRequired { input_requests } = tasks.get(&task.task_id, client(1)).unwrap().payload
            {
                asked = input_requests.keys().next().cloned();
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let key = asked.expect("the task asks");
        tasks.update(&task.task_id, client(1), [("unknown".to_owned(), json!(1))].into()).unwrap();
        assert_eq!(tasks.get(&task.task_id, client(1)).unwrap().task.status, TaskStatus::InputRequired);
        tasks.update(&task.task_id, client(1), [(key, json!({"action": "accept"}))].into()).unwrap();
        for _ in 0..100 {
            if let TaskPayload::Completed { result } = tasks.get(&task.task_id, client(1)).unwrap().payload {
                assert!(Value::Object(result.clone()).to_string().contains("accept"), "{result:?}");
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the task did not complete");
    }
}
