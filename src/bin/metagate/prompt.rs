//! The interactive prompts of `metagate permit`, asked with dialoguer on stderr's terminal.

use dialoguer::{Confirm, Input, Select, console::Term};
use metagate::permit::{PromptError, Prompter, Refusal};

/// The questions, asked on stderr's terminal.
pub struct Dialoguer(pub Term);

fn prompt_error(e: dialoguer::Error) -> PromptError {
    let dialoguer::Error::IO(e) = e;
    if e.kind() == std::io::ErrorKind::Interrupted {
        PromptError::Cancelled
    } else {
        PromptError::Io(e.to_string())
    }
}

impl Prompter for Dialoguer {
    fn select(
        &mut self,
        prompt: &str,
        items: &[String],
        default: usize,
    ) -> Result<usize, PromptError> {
        Select::new()
            .with_prompt(prompt)
            .items(items)
            .default(default)
            .interact_on_opt(&self.0)
            .map_err(prompt_error)?
            .ok_or(PromptError::Cancelled)
    }

    fn input(
        &mut self,
        prompt: &str,
        default: Option<&str>,
        check: &mut dyn FnMut(&str) -> Result<(), Refusal>,
    ) -> Result<String, PromptError> {
        let mut input = Input::<String>::new()
            .with_prompt(prompt)
            .allow_empty(true)
            .validate_with(|s: &String| check(s));
        if let Some(d) = default.filter(|d| !d.is_empty()) {
            input = input.default(d.to_string());
        }
        input.interact_text_on(&self.0).map_err(prompt_error)
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool, PromptError> {
        Confirm::new()
            .with_prompt(prompt)
            .default(default)
            .interact_on_opt(&self.0)
            .map_err(prompt_error)?
            .ok_or(PromptError::Cancelled)
    }
}
