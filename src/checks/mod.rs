//! Checks an argument's kind switches on that read a language of their own.

pub mod shell;
