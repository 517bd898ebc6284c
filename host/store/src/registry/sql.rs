//! What the registry says to its database, in the words both backends share:
//! statements with `?1`-style parameters, values that are integers or text
//! (either possibly NULL), rows of such cells.
//!
//! Invariants:
//! - The registry's logic is written once against [`Session`]; a statement it
//!   sends is plain SQL both SQLite and PostgreSQL run unchanged (the
//!   PostgreSQL backend turns `?N` into `$N`), so nothing here names a dialect.
//! - A cell of a type the registry never writes is [`Fault::Malformed`]: the
//!   database holds what this server did not put there.

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// A 64-bit integer, or NULL.
    Int(Option<i64>),
    /// Text, or NULL.
    Text(Option<&'a str>),
}

impl From<i64> for Value<'_> {
    fn from(value: i64) -> Self {
        Value::Int(Some(value))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(value: &'a str) -> Self {
        Value::Text(Some(value))
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(value: &'a String) -> Self {
        Value::Text(Some(value))
    }
}

impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(value: Option<&'a str>) -> Self {
        Value::Text(value)
    }
}

impl From<Option<i64>> for Value<'_> {
    fn from(value: Option<i64>) -> Self {
        Value::Int(value)
    }
}

/// One cell of a result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// Text.
    Text(String),
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Cell>);

impl Row {
    fn cell(&self, column: usize) -> Result<&Cell, Fault> {
        self.0.get(column).ok_or_else(|| Fault::Malformed(format!("a row without column {column}")))
    }

    /// Column `column` as an integer.
    pub fn int(&self, column: usize) -> Result<i64, Fault> {
        match self.cell(column)? {
            Cell::Int(value) => Ok(*value),
            other => Err(Fault::Malformed(format!("column {column} holds {other:?} where an integer belongs"))),
        }
    }

    /// Column `column` as a count or size (an integer that is not negative).
    pub fn unsigned(&self, column: usize) -> Result<u64, Fault> {
        let value = self.int(column)?;
        u64::try_from(value).map_err(|_| Fault::Malformed(format!("column {column} holds {value} where a size belongs")))
    }

    /// Column `column` as text.
    pub fn text(&self, column: usize) -> Result<String, Fault> {
        match self.cell(column)? {
            Cell::Text(value) => Ok(value.clone()),
            other => Err(Fault::Malformed(format!("column {column} holds {other:?} where text belongs"))),
        }
    }

    /// Column `column` as text or NULL.
    pub fn optional_text(&self, column: usize) -> Result<Option<String>, Fault> {
        match self.cell(column)? {
            Cell::Null => Ok(None),
            _ => self.text(column).map(Some),
        }
    }
}

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// SQLite failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed (or the connection to it).
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// The database holds what this server never writes.
    #[error("{0}")]
    Malformed(String),
    /// A value the registry cannot store (a path that is not UTF-8, a size past 2⁶³).
    #[error("{0}")]
    Unstorable(String),
}

/// A transaction in progress: every statement of one registry call runs in one.
pub trait Session {
    /// Runs `sql` with `params` and returns every row.
    fn query(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Vec<Row>, Fault>;

    /// Runs `sql` with `params`; returns how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, Fault>;
}

impl dyn Session + '_ {
    /// The first row `sql` returns, if any.
    pub fn first(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Row>, Fault> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row `sql` returns (an `INSERT … RETURNING`, a count).
    pub fn one(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Row, Fault> {
        self.first(sql, params)?.ok_or_else(|| Fault::Malformed(format!("no row from {sql}")))
    }
}

/// Applies `serde_json` to a stored document, a failure being [`Fault::Malformed`].
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Fault> {
    serde_json::from_str(text).map_err(|error| Fault::Malformed(format!("a stored document that does not parse: {error}")))
}
