//! Model-played colleagues.
//!
//! The system prompt is built ([`PromptBuilder::npc`]) from the colleague's persona
//! and the clue rules whose conditions hold now, each shown with its subject and its
//! response, with the instruction to reveal nothing beyond them. The conversation is
//! the chat thread so far: the colleague's own messages as `assistant`, everyone
//! else's as `user` (prefixed with the sender's name in groups).
//!
//! Replies are cached by the BLAKE3 hash of the whole request body (model, prompt,
//! conversation and sampling settings) in a directory of `<hash>.json` files, so a
//! re-run makes no request and gets the same bytes. A disclosure is recorded when a
//! clue's response [appears](tbsim_engine::npc::appears_in) in the reply.
//!
//! The [disclosure rules](tbsim_engine::npc) hold here too: the model only ever sees clues
//! whose task is released, and a message that is not a specific question (or names
//! an ambiguous first name) gets the fixed [`NpcQuery::clarify`] reply without a
//! model call.
//!
//! In a group, a colleague who knows nothing relevant now stays silent without a
//! model call, and one who answers exactly [`NO_REPLY`] stays silent too. A direct
//! message always gets an answer: an empty one becomes the colleague's default reply.
//!
//! The engine runs inside the synchronous simulation and blocks on its request; the
//! request itself runs on the tokio runtime behind the [`ModelCaller`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::client::{ModelCaller, RequestBody};
use super::message::{Message, Role, response_text};
use super::prompt::{NO_REPLY, PromptBuilder};
use tbsim_core::protocol::ModelUsage;
use tbsim_engine::agent::block_on;
use tbsim_engine::npc::{NpcAnswer, NpcEngine, NpcError, NpcQuery, appears_in};
use tbsim_engine::trajectory::NpcRecord;

/// A directory of cached replies, keyed by request hash.
#[derive(Debug, Clone)]
pub struct ReplyCache {
    dir: PathBuf,
}

impl ReplyCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: &Path) -> ReplyCache {
        ReplyCache {
            dir: dir.to_owned(),
        }
    }

    /// The key of a request body.
    pub fn key(body: &RequestBody) -> String {
        // Bodies are serialised from the same structs in the same order, so equal
        // requests hash equally.
        blake3::hash(body.text().as_bytes()).to_hex().to_string()
    }

    /// The cached response for a key.
    pub fn get(&self, key: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.dir.join(format!("{key}.json"))).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        v.get("response").cloned()
    }

    /// Stores a response. Failing to write only costs a request next time.
    pub fn put(&self, key: &str, body: &RequestBody, response: &Value) {
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let path = self.dir.join(format!("{key}.json"));
        let tmp = self.dir.join(format!("{key}.{}.tmp", std::process::id()));
        let text = json!({"request": body, "response": response}).to_string();
        // Write then rename, so a reader never sees half a file.
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// Colleagues played by a model.
pub struct LlmNpc {
    caller: Arc<dyn ModelCaller>,
    prompts: Arc<dyn PromptBuilder>,
    cache: ReplyCache,
    usage: ModelUsage,
    requests: u64,
}

impl std::fmt::Debug for LlmNpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmNpc")
            .field("model", &self.caller.model())
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl LlmNpc {
    /// An engine calling `caller`, caching in `cache`.
    pub fn new(
        caller: Arc<dyn ModelCaller>,
        prompts: Arc<dyn PromptBuilder>,
        cache: ReplyCache,
    ) -> LlmNpc {
        LlmNpc {
            caller,
            prompts,
            cache,
            usage: ModelUsage::default(),
            requests: 0,
        }
    }

    /// The request body for a query.
    pub fn request(&self, q: &NpcQuery<'_>) -> RequestBody {
        let mut msgs = vec![Message::text(Role::System, self.prompts.npc(q))];
        for l in &q.conversation {
            if l.mine {
                msgs.push(Message::text(Role::Assistant, l.text.clone()));
            } else if q.direct {
                msgs.push(Message::text(Role::User, l.text.clone()));
            } else {
                msgs.push(Message::text(Role::User, format!("{}: {}", l.name, l.text)));
            }
        }
        // Colleagues answer the same question the same way.
        self.caller.body(&msgs, None, Some(0.0))
    }
}

impl NpcEngine for LlmNpc {
    fn reply(&mut self, q: &NpcQuery<'_>) -> Result<NpcAnswer, NpcError> {
        // The disclosure rules bind a model as much as a script: a message that is
        // not a specific question gets the fixed request, with no model call.
        if let Some(c) = &q.clarify {
            return Ok(NpcAnswer {
                reply: Some((c.clone(), Vec::new())),
                record: None,
            });
        }
        if !q.direct && q.clues.is_empty() {
            return Ok(NpcAnswer::default());
        }
        let body = self.request(q);
        let key = ReplyCache::key(&body);
        let raw = match self.cache.get(&key) {
            Some(r) => r,
            None => {
                self.requests += 1;
                let out = block_on(self.caller.call(body.clone(), self.requests));
                match out.response {
                    Ok(mut r) => {
                        super::client::contain_reply(self.caller.as_ref(), &mut r);
                        self.usage.add(&self.caller.usage(&r));
                        self.cache.put(&key, &body, &r);
                        r
                    }
                    Err(e) => {
                        let message = e.to_string();
                        return Err(NpcError {
                            npc: q.npc.to_owned(),
                            record: Some(Box::new(NpcRecord {
                                model: self.caller.model().to_owned(),
                                request: body.value(),
                                response: Value::Null,
                                reply: None,
                                clues: Vec::new(),
                                failures: out.failures,
                                error: Some(message.clone()),
                            })),
                            message,
                        });
                    }
                }
            }
        };
        let text = response_text(&raw).trim().to_owned();
        let silent = text.is_empty() || text == NO_REPLY;
        let reply = match (silent, q.direct) {
            (true, false) => None,
            (true, true) => Some(q.default_reply.to_owned()),
            (false, _) => Some(text),
        };
        let clues: Vec<String> = reply
            .as_deref()
            .map(|r| {
                q.clues
                    .iter()
                    .filter(|c| appears_in(&c.response, r))
                    .map(|c| c.key.clone())
                    .collect()
            })
            .unwrap_or_default();
        let record = NpcRecord {
            model: self.caller.model().to_owned(),
            request: body.value(),
            response: raw,
            reply: reply.clone(),
            clues: clues.clone(),
            failures: Vec::new(),
            error: None,
        };
        Ok(NpcAnswer {
            reply: reply.map(|r| (r, clues)),
            record: Some(record),
        })
    }

    fn usage(&self) -> Option<ModelUsage> {
        Some(self.usage.clone())
    }
}
