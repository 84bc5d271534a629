//! A store brought up from any older schema version holds what a new store holds: the same
//! tables (columns, types, defaults, storage options), indexes, constraints, sequences,
//! view, triggers and functions (signatures, settings and bodies), and nothing more.

use super::spaces::{at_version, latest, MIGRATIONS};
use super::{cli, pg, psql, schema_of};

/// Everything the catalog says of store `schema`, a line an object, sorted, the schema's
/// name written `{schema}`.
fn catalog(schema: &str) -> Vec<String> {
    let sql = format!(
        "WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = '{schema}'), \
         cols AS (SELECT a.*, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS n \
                    FROM pg_attribute a WHERE a.attnum > 0 AND NOT a.attisdropped) \
         SELECT json_agg(line ORDER BY line) FROM ( \
           SELECT 'relation ' || c.relname || ' kind ' || c.relkind::text || ' persistence ' \
                  || c.relpersistence::text || ' options ' \
                  || coalesce(array_to_string(ARRAY(SELECT o FROM unnest(c.reloptions) o ORDER BY o), ','), '') \
                  AS line \
             FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM ns) \
           UNION ALL \
           SELECT 'column ' || c.relname || '.' || a.attname || ' #' || a.n || ' ' \
                  || format_type(a.atttypid, a.atttypmod) \
                  || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END \
                  || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') \
             FROM cols a JOIN pg_class c ON c.oid = a.attrelid \
             LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
            WHERE c.relnamespace = (SELECT oid FROM ns) \
           UNION ALL \
           SELECT 'index ' || pg_get_indexdef(i.indexrelid) \
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
            WHERE c.relnamespace = (SELECT oid FROM ns) \
           UNION ALL \
           SELECT 'constraint ' || k.conrelid::regclass::text || ' ' || k.conname || ' ' \
                  || pg_get_constraintdef(k.oid) \
             FROM pg_constraint k WHERE k.connamespace = (SELECT oid FROM ns) \
           UNION ALL \
           SELECT 'trigger ' || pg_get_triggerdef(t.oid) \
             FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            WHERE c.relnamespace = (SELECT oid FROM ns) AND NOT t.tgisinternal \
           UNION ALL \
           SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid) \
             FROM pg_class c WHERE c.relkind = 'v' AND c.relnamespace = (SELECT oid FROM ns) \
           UNION ALL \
           SELECT 'sequence ' || s.sequencename || ' ' || s.data_type || ' start ' \
                  || s.start_value || ' min ' || s.min_value || ' by ' || s.increment_by \
             FROM pg_sequences s WHERE s.schemaname = '{schema}' \
           UNION ALL \
           SELECT 'function ' || pg_get_functiondef(p.oid) \
             FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)) x"
    );
    let text = psql(&sql).replace(schema, "{schema}");
    serde_json::from_str(&text).expect("the catalog as JSON")
}

/// The lines of `a` that `b` lacks.
fn missing_from(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|l| !b.contains(l)).cloned().collect()
}

/// A new store, made by a write.
fn new_store() -> Vec<String> {
    let url = pg::fresh_url();
    cli(&url, &["upsert", "--summary", "a new store"]).ok();
    catalog(&schema_of(&url))
}

#[test]
fn a_store_of_every_older_version_is_brought_to_what_a_new_store_holds() {
    let fresh = new_store();
    assert!(
        fresh
            .iter()
            .any(|l| l.starts_with("function CREATE OR REPLACE FUNCTION")),
        "{fresh:#?}"
    );
    for v in 1..=MIGRATIONS.len() {
        let url = pg::fresh_url();
        let schema = schema_of(&url);
        at_version(&schema, v);
        // The first call of this claimdag brings the store up to date.
        cli(&url, &["list"]).ok();
        assert_eq!(
            psql(&format!("SELECT version FROM {schema}.store")),
            latest()
        );
        let migrated = catalog(&schema);
        let extra = missing_from(&migrated, &fresh);
        let lacking = missing_from(&fresh, &migrated);
        assert!(
            extra.is_empty() && lacking.is_empty(),
            "a store of version {v}, migrated, differs from a new one.\n\
             Only in the migrated store:\n{}\n\nOnly in the new store:\n{}",
            extra.join("\n"),
            lacking.join("\n")
        );
    }
}

/// An up-to-date store runs nothing when it is opened: the functions are made again only
/// by a migration.
#[test]
fn opening_an_up_to_date_store_changes_nothing_in_it() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    cli(&url, &["upsert", "--summary", "made"]).ok();
    let oids = format!(
        "SELECT string_agg(p.oid::text || '@' || p.xmin::text, ',' ORDER BY p.oid) FROM pg_proc p \
         JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '{schema}'"
    );
    let before = psql(&oids);
    cli(&url, &["list"]).ok();
    cli(&url, &["upsert", "--summary", "again"]).ok();
    assert_eq!(psql(&oids), before);
}

/// Processes that open an older store at once take turns migrating it (an advisory lock):
/// every one of them gets through, and the store is migrated once, as a new store is made.
#[test]
fn processes_opening_an_older_store_at_once_all_get_through() {
    let fresh = new_store();
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    at_version(&schema, 1);
    let runs: Vec<_> = (0..6)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                if i % 2 == 0 {
                    cli(&url, &["list"]).ok().to_string()
                } else {
                    cli(&url, &["upsert", "--summary", &format!("racer {i}")])
                        .ok()
                        .to_string()
                }
            })
        })
        .collect();
    for r in runs {
        r.join().expect("a process");
    }
    assert_eq!(
        psql(&format!("SELECT version FROM {schema}.store")),
        latest()
    );
    assert_eq!(catalog(&schema), fresh);
    assert!(cli(&url, &["check"]).ok().starts_with("ok: 3 live nodes"));
}
