//! What bench/guided-engines asks of llguidance: a vocabulary (the token trie and the
//! factory's per-vocabulary slices), a matcher per JSON schema, masks, accept, rollback.
use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};
use napi::bindgen_prelude::{Buffer, Uint32Array};
use napi_derive::napi;

fn failure(e: impl std::fmt::Display) -> napi::Error {
    napi::Error::from_reason(e.to_string())
}

#[napi]
pub struct LlgVocabulary {
    factory: Arc<ParserFactory>,
}

#[napi]
impl LlgVocabulary {
    /// `bytes` holds every token's bytes back to back, token i in offsets[i]..offsets[i + 1];
    /// special tokens start with 0xff, as llguidance expects.
    #[napi(constructor)]
    pub fn new(bytes: Buffer, offsets: Uint32Array, eos: u32) -> napi::Result<Self> {
        let offsets: &[u32] = &offsets;
        let words: Vec<Vec<u8>> = offsets.windows(2).map(|w| bytes[w[0] as usize..w[1] as usize].to_vec()).collect();
        let info = TokRxInfo::new(words.len() as u32, eos);
        let env: TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
        let mut factory = ParserFactory::new_simple(&env).map_err(failure)?;
        factory.quiet();
        Ok(LlgVocabulary { factory: Arc::new(factory) })
    }
}

#[napi]
pub struct LlgMatcher {
    matcher: Matcher,
}

#[napi]
impl LlgMatcher {
    /// Compiles `schema` (JSON text, with llguidance's x-guidance options if any).
    #[napi(factory)]
    pub fn json_schema(vocabulary: &LlgVocabulary, schema: String) -> napi::Result<Self> {
        let value: serde_json::Value = serde_json::from_str(&schema).map_err(failure)?;
        let parser = vocabulary.factory.create_parser(TopLevelGrammar::from_json_schema(value)).map_err(failure)?;
        Ok(LlgMatcher { matcher: Matcher::new(Ok(parser)) })
    }

    /// A matcher at the start of the same compiled grammar (what each request gets).
    #[napi]
    pub fn fork(&self) -> LlgMatcher {
        LlgMatcher { matcher: self.matcher.deep_clone() }
    }

    /// Bit t of `mask` for every allowed token (end token included where the grammar may end).
    #[napi]
    pub fn fill_mask(&mut self, mut mask: Uint32Array) -> napi::Result<bool> {
        let vob = self.matcher.compute_mask_or_eos().map_err(failure)?;
        let words = vob.as_slice();
        let out: &mut [u32] = &mut mask;
        let n = out.len().min(words.len());
        out[..n].copy_from_slice(&words[..n]);
        for w in out[n..].iter_mut() {
            *w = 0;
        }
        Ok(vob.num_set() > 0)
    }

    /// Advances by `token` if the grammar allows it; false (and no change) otherwise.
    #[napi]
    pub fn accept_token(&mut self, token: u32) -> napi::Result<bool> {
        let valid = self.matcher.validate_tokens(&[token]).map_err(failure)?;
        if valid == 0 {
            return Ok(false);
        }
        self.matcher.consume_token(token).map_err(failure)?;
        Ok(true)
    }

    #[napi]
    pub fn rollback(&mut self, n: u32) -> napi::Result<()> {
        self.matcher.rollback(n as usize).map_err(failure)
    }

    #[napi]
    pub fn is_stopped(&self) -> bool {
        self.matcher.is_stopped()
    }

    #[napi]
    pub fn is_accepting(&mut self) -> napi::Result<bool> {
        self.matcher.is_accepting().map_err(failure)
    }
}
