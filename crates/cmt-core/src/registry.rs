//! Registries: the tables that map the names used in scenario files, sweeps and on the
//! command line to algorithms.
//!
//! There is one [`Table`] per extension point — schedulers, retransmission policies and
//! congestion controllers (each module's `builtin()` and `REGISTRY`); the simulator adds
//! loss models. A row is a name, its aliases, a one-line summary and a
//! builder from a scenario's parameter table to a factory. The name list, the lookup,
//! the `--help` text and the "unknown …" error all derive from the rows, so adding an
//! algorithm is one file plus one row.
//!
//! Each extension point also has one process-wide table, a [`Global`], that starts with
//! the built-in rows. A program that brings its own algorithms [`register`](Global::register)s
//! them before it builds a scenario; from then on scenario files, sweeps and the real
//! runtime accept the new names (the `cmtlab` crate's `Cmtlab` builder does this for a
//! whole command line).

use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use crate::params::{ParamError, Params};

/// Builds a factory from a parameter table.
pub type Builder<F> = Arc<dyn Fn(&Params) -> Result<Box<F>, ParamError> + Send + Sync>;

/// One row of a [`Table`].
pub struct Entry<F: ?Sized> {
    /// The name scenario files use.
    pub name: String,
    /// Other names for the same algorithm (accepted, not listed).
    pub aliases: Vec<String>,
    /// One line: what it is and where it comes from.
    pub summary: String,
    /// Whether the row was registered at run time rather than built in.
    pub extension: bool,
    /// What identifies the registered code when the program's executable does not (a
    /// hash of a Python class's source, …); empty for built-in rows.
    pub fingerprint: String,
    build: Builder<F>,
}

impl<F: ?Sized> Clone for Entry<F> {
    fn clone(&self) -> Self {
        Entry {
            name: self.name.clone(),
            aliases: self.aliases.clone(),
            summary: self.summary.clone(),
            extension: self.extension,
            fingerprint: self.fingerprint.clone(),
            build: Arc::clone(&self.build),
        }
    }
}

impl<F: ?Sized> fmt::Debug for Entry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("summary", &self.summary)
            .field("extension", &self.extension)
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

impl<F: ?Sized> Entry<F> {
    fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }
}

/// Why a registration was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError(pub String);

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegistryError {}

/// The name → builder table of one extension point.
pub struct Table<F: ?Sized> {
    kind: &'static str,
    rows: Vec<Entry<F>>,
}

impl<F: ?Sized> Clone for Table<F> {
    fn clone(&self) -> Self {
        Table {
            kind: self.kind,
            rows: self.rows.clone(),
        }
    }
}

impl<F: ?Sized> fmt::Debug for Table<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("kind", &self.kind)
            .field("rows", &self.rows)
            .finish()
    }
}

impl<F: ?Sized> Table<F> {
    /// An empty table of `kind` ("scheduler", "congestion control", …), the word the
    /// error messages use.
    pub fn new(kind: &'static str) -> Self {
        Table {
            kind,
            rows: Vec::new(),
        }
    }

    /// What the table holds ("scheduler", …).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Adds a built-in row (names are checked unique by each module's tests).
    pub fn row(
        mut self,
        name: &str,
        aliases: &[&str],
        summary: &str,
        build: impl Fn(&Params) -> Result<Box<F>, ParamError> + Send + Sync + 'static,
    ) -> Self {
        self.rows.push(Entry {
            name: name.to_string(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            summary: summary.to_string(),
            extension: false,
            fingerprint: String::new(),
            build: Arc::new(build),
        });
        self
    }

    /// Adds a row at run time. Refused: a name that is not 1–64 characters of
    /// `a-z 0-9 - _ .`, or one the table already answers to.
    pub fn register(
        &mut self,
        name: &str,
        summary: &str,
        build: Builder<F>,
    ) -> Result<(), RegistryError> {
        self.register_extension(Extension {
            name,
            summary,
            fingerprint: "",
            replace: false,
            build,
        })
    }

    /// Adds a row at run time, with a fingerprint and optionally replacing an earlier
    /// registration of the same name (a notebook cell run twice). Built-in rows are
    /// never replaced.
    pub fn register_extension(&mut self, ext: Extension<'_, F>) -> Result<(), RegistryError> {
        check_name(self.kind, ext.name)?;
        let taken = self.rows.iter().position(|r| r.answers_to(ext.name));
        let row = Entry {
            name: ext.name.to_string(),
            aliases: Vec::new(),
            summary: ext.summary.to_string(),
            extension: true,
            fingerprint: ext.fingerprint.to_string(),
            build: ext.build,
        };
        match taken {
            None => self.rows.push(row),
            Some(i) if ext.replace && self.rows[i].extension => self.rows[i] = row,
            Some(i) => {
                let what = if ext.replace && !self.rows[i].extension {
                    "built in and cannot be replaced"
                } else {
                    "already registered"
                };
                return Err(RegistryError(format!(
                    "{} `{}` is {what}",
                    self.kind, ext.name
                )));
            }
        }
        Ok(())
    }

    /// The rows, built-in ones first, in registration order.
    pub fn entries(&self) -> &[Entry<F>] {
        &self.rows
    }

    /// Every listed name (aliases left out), in table order.
    pub fn names(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.name.clone()).collect()
    }

    /// The factory `name` builds from `params`; an unknown name is an error that lists
    /// the known ones.
    pub fn build(&self, name: &str, params: &Params) -> Result<Box<F>, ParamError> {
        match self.rows.iter().find(|r| r.answers_to(name)) {
            Some(row) => (row.build)(params),
            None => Err(ParamError(format!(
                "unknown {} `{name}` (known: {})",
                self.kind,
                self.names().join(", ")
            ))),
        }
    }

    /// The names that were registered at run time, in registration order.
    pub fn extensions(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.extension)
            .map(|r| r.name.clone())
            .collect()
    }

    /// The fingerprints of the rows registered at run time, as `name@fingerprint`, in
    /// registration order (rows without one are left out).
    pub fn extension_fingerprints(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.extension && !r.fingerprint.is_empty())
            .map(|r| format!("{}@{}", r.name, r.fingerprint))
            .collect()
    }
}

/// A row to register at run time ([`Table::register_extension`]).
pub struct Extension<'a, F: ?Sized> {
    /// The name scenario files will use.
    pub name: &'a str,
    /// One line: what it is.
    pub summary: &'a str,
    /// What identifies the code behind the row when the executable does not; it enters
    /// the build hash of results.
    pub fingerprint: &'a str,
    /// Replace an earlier registration of the same name instead of refusing it.
    pub replace: bool,
    /// The builder.
    pub build: Builder<F>,
}

fn check_name(kind: &str, name: &str) -> Result<(), RegistryError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(RegistryError(format!(
            "{kind} name `{name}`: use 1-64 characters of a-z, 0-9, `-`, `_` and `.`"
        )))
    }
}

/// A process-wide [`Table`] that starts with the built-in rows.
pub struct Global<F: ?Sized + 'static> {
    table: OnceLock<RwLock<Table<F>>>,
    builtin: fn() -> Table<F>,
}

impl<F: ?Sized + 'static> Global<F> {
    /// A table that is filled from `builtin` on first use.
    pub const fn new(builtin: fn() -> Table<F>) -> Self {
        Global {
            table: OnceLock::new(),
            builtin,
        }
    }

    fn lock(&self) -> &RwLock<Table<F>> {
        self.table.get_or_init(|| RwLock::new((self.builtin)()))
    }

    /// Reads the table.
    pub fn read<R>(&self, f: impl FnOnce(&Table<F>) -> R) -> R {
        // A panic while registering cannot leave a half-written row (push is the last
        // step), so a poisoned lock still holds a consistent table.
        let guard = self.lock().read().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    /// Adds a row; see [`Table::register`].
    pub fn register(
        &self,
        name: &str,
        summary: &str,
        build: Builder<F>,
    ) -> Result<(), RegistryError> {
        let mut guard = self.lock().write().unwrap_or_else(|e| e.into_inner());
        guard.register(name, summary, build)
    }

    /// Adds or replaces a row; see [`Table::register_extension`].
    pub fn register_extension(&self, ext: Extension<'_, F>) -> Result<(), RegistryError> {
        let mut guard = self.lock().write().unwrap_or_else(|e| e.into_inner());
        guard.register_extension(ext)
    }

    /// A copy of the table as it is now.
    pub fn snapshot(&self) -> Table<F> {
        self.read(Table::clone)
    }

    /// Every listed name.
    pub fn names(&self) -> Vec<String> {
        self.read(Table::names)
    }

    /// See [`Table::build`].
    pub fn build(&self, name: &str, params: &Params) -> Result<Box<F>, ParamError> {
        self.read(|t| t.build(name, params))
    }
}

/// Defines an extension point's process-wide table and its functions from the module's
/// `builtin()` table: `REGISTRY`, `names()`, `by_name(name, params)` and
/// `register(name, summary, build)`. `$factory` is the factory trait (in scope), `$what`
/// the word for one algorithm in documentation.
#[macro_export]
macro_rules! extension_point {
    ($factory:ident, $what:literal) => {
        #[doc = concat!("The process-wide ", $what, " table: the built-in rows and any registered at run time.")]
        pub static REGISTRY: $crate::registry::Global<dyn $factory> =
            $crate::registry::Global::new(builtin);

        #[doc = concat!("Every ", $what, " name scenario files accept (aliases aside).")]
        pub fn names() -> Vec<String> {
            REGISTRY.names()
        }

        /// The factory `name` builds from `params` (the process-wide table).
        pub fn by_name(
            name: &str,
            params: &$crate::Params,
        ) -> Result<Box<dyn $factory>, $crate::ParamError> {
            REGISTRY.build(name, params)
        }

        #[doc = concat!("Registers a ", $what, " under `name` in the process-wide table (see `cmt_core::registry`).")]
        pub fn register<T: $factory + 'static>(
            name: &str,
            summary: &str,
            build: impl Fn(&$crate::Params) -> Result<T, $crate::ParamError> + Send + Sync + 'static,
        ) -> Result<(), $crate::registry::RegistryError> {
            REGISTRY.register(
                name,
                summary,
                std::sync::Arc::new(move |p| Ok(Box::new(build(p)?) as Box<dyn $factory>)),
            )
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Thing: Send + Sync {
        fn n(&self) -> u32;
    }
    struct Seven;
    impl Thing for Seven {
        fn n(&self) -> u32 {
            7
        }
    }

    fn table() -> Table<dyn Thing> {
        Table::<dyn Thing>::new("thing")
            .row("seven", &["7"], "the number seven", |_| Ok(Box::new(Seven)))
    }

    #[test]
    fn lookup_by_name_and_alias_and_unknown_names_list_the_known_ones() {
        let t = table();
        assert_eq!(t.build("seven", &Params::default()).unwrap().n(), 7);
        assert_eq!(t.build("7", &Params::default()).unwrap().n(), 7);
        let e = t.build("eight", &Params::default()).err().unwrap();
        assert_eq!(e.0, "unknown thing `eight` (known: seven)");
    }

    #[test]
    fn registration_refuses_taken_names_aliases_and_bad_names() {
        let mut t = table();
        let b: Builder<dyn Thing> = Arc::new(|_| Ok(Box::new(Seven)));
        assert!(t.register("seven", "", b.clone()).is_err());
        assert!(t.register("7", "", b.clone()).is_err());
        for bad in ["", "Seven", "a b", "x/y", &"a".repeat(65)] {
            let e = t.register(bad, "", b.clone()).unwrap_err();
            assert!(e.0.starts_with("thing name"), "{bad}: {e}");
        }
        t.register("also-seven", "x", b).unwrap();
        assert_eq!(t.names(), ["seven", "also-seven"]);
        assert_eq!(t.extensions(), ["also-seven"]);
    }

    #[test]
    fn an_extension_row_may_be_replaced_a_built_in_one_never() {
        let mut t = table();
        let b: Builder<dyn Thing> = Arc::new(|_| Ok(Box::new(Seven)));
        let ext = |name, fingerprint, replace| Extension {
            name,
            summary: "",
            fingerprint,
            replace,
            build: b.clone(),
        };
        t.register_extension(ext("mine", "aaaa", false)).unwrap();
        let e = t
            .register_extension(ext("mine", "bbbb", false))
            .unwrap_err();
        assert_eq!(e.0, "thing `mine` is already registered");
        t.register_extension(ext("mine", "bbbb", true)).unwrap();
        assert_eq!(t.names(), ["seven", "mine"]);
        assert_eq!(t.extension_fingerprints(), ["mine@bbbb"]);
        let e = t.register_extension(ext("seven", "", true)).unwrap_err();
        assert_eq!(e.0, "thing `seven` is built in and cannot be replaced");
    }

    #[test]
    fn a_global_table_starts_built_in_and_keeps_registrations() {
        static G: Global<dyn Thing> = Global::new(table);
        assert_eq!(G.names(), ["seven"]);
        G.register("seven-again", "", Arc::new(|_| Ok(Box::new(Seven))))
            .unwrap();
        assert_eq!(G.build("seven-again", &Params::default()).unwrap().n(), 7);
        assert_eq!(G.snapshot().extensions(), ["seven-again"]);
    }
}
