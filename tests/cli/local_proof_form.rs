//! The local proof's form: spawn writes one file, `created.json` with the
//! session's command in it; `command.json` comes only later (`resume --save`),
//! and an older bullpen's pair (`created.json` without a command, beside its
//! `command.json`) keeps working exactly as before. Whatever the form, a file
//! that is not what bullpen wrote authorises nothing.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::gc::{gc, session, setup, COMMIT};
use crate::support::{assert_contains, Env};

fn local_dir(env: &Env, id: &str) -> PathBuf {
    env.repo.join(".git/bullpen/local").join(id)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap();
    bytes.push(b'\n');
    std::fs::write(path, bytes).unwrap();
}

fn push(env: &Env, id: &str) {
    env.git(
        &env.repo,
        &["push", "-q", "origin", &format!("bullpen/{id}")],
    )
    .ok();
}

/// Turn a session's local proof into the pair the previous bullpen wrote:
/// `created.json` without a command, and `command.json` with it.
fn as_old_pair(env: &Env, id: &str) {
    let dir = local_dir(env, id);
    let new = read_json(&dir.join("created.json"));
    let command = &new["command"];
    assert!(
        command["argv"].is_array(),
        "spawn's file holds the command: {new}"
    );
    write_json(
        &dir.join("created.json"),
        &json!({
            "schema": 1,
            "worktree": new["worktree"],
            "worktree_root": new["worktree_root"],
            "created_at": new["created_at"],
            "spawner": new["spawner"],
        }),
    );
    write_json(
        &dir.join("command.json"),
        &json!({
            "schema": 1,
            "argv": command["argv"],
            "recorded_at": "2026-01-01T00:00:00Z",
        }),
    );
}

#[test]
fn spawn_writes_one_file_of_proof_with_the_command_in_it() {
    let env = Env::new();
    env.bullpen(&["spawn", "one", "--", "sh", "-c", "true"])
        .ok();
    let dir = local_dir(&env, "one");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The run's own proof went with its end.
    assert_eq!(names, ["created.json"], "{dir:?}");
    let created = read_json(&dir.join("created.json"));
    assert_eq!(created["command"]["argv"], json!(["sh", "-c", "true"]));
    assert_eq!(
        created["worktree"],
        env.worktree_of("one").to_str().unwrap()
    );
}

#[test]
fn an_old_pair_resumes_with_its_command_and_is_collected() {
    let env = setup();
    let wt = env.spawn_sh("old", "echo ran >> ran.txt");
    as_old_pair(&env, "old");
    // A plain resume runs the command the old command.json holds.
    env.bullpen(&["resume", "old"]).ok();
    assert_eq!(
        std::fs::read_to_string(wt.join("ran.txt")).unwrap(),
        "ran\nran\n"
    );
    // Its command.json is still the authority: a different one is refused.
    write_json(
        &local_dir(&env, "old").join("command.json"),
        &json!({"schema": 1, "argv": ["sh", "-c", "echo other"], "recorded_at": "x"}),
    );
    let run = env.bullpen(&["resume", "old"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "is not the one this machine recorded");
    // The old created.json is the authority to delete: gc collects it.
    std::fs::remove_file(wt.join("ran.txt")).unwrap();
    push(&env, "old");
    let (_, entries) = gc(&env, &[]);
    assert_eq!(
        session(&entries, "old")["action"],
        "removed",
        "{entries:#?}"
    );
    assert!(!wt.exists());
    assert_eq!(env.record("old")["state"], "collected");
}

#[test]
fn an_old_pair_is_removed_by_rm() {
    let env = setup();
    let wt = env.spawn_sh("oldrm", COMMIT);
    as_old_pair(&env, "oldrm");
    env.bullpen(&["rm", "--force", "oldrm"]).ok();
    assert!(!wt.exists());
    assert_eq!(env.record("oldrm")["state"], "collected");
}

#[test]
fn resume_save_leaves_the_created_part_as_spawn_wrote_it() {
    let env = setup();
    let wt = env.spawn_sh("saved", "echo first >> ran.txt");
    let created = local_dir(&env, "saved").join("created.json");
    let before = std::fs::read(&created).unwrap();
    env.bullpen(&[
        "resume",
        "saved",
        "--save",
        "--",
        "sh",
        "-c",
        "echo second >> ran.txt",
    ])
    .ok();
    assert_eq!(
        std::fs::read(&created).unwrap(),
        before,
        "created.json rewritten"
    );
    let saved = read_json(&local_dir(&env, "saved").join("command.json"));
    assert_eq!(saved["argv"], json!(["sh", "-c", "echo second >> ran.txt"]));
    // The saved command takes the place of spawn's.
    env.bullpen(&["resume", "saved"]).ok();
    assert_eq!(
        std::fs::read_to_string(wt.join("ran.txt")).unwrap(),
        "first\nsecond\nsecond\n"
    );
    // And the authority to delete is intact.
    std::fs::remove_file(wt.join("ran.txt")).unwrap();
    push(&env, "saved");
    let (_, entries) = gc(&env, &[]);
    assert_eq!(
        session(&entries, "saved")["action"],
        "removed",
        "{entries:#?}"
    );
}

#[test]
fn an_unreadable_saved_command_is_refused_never_spawns_instead() {
    let env = Env::new();
    let wt = env.spawn_sh("bad", "echo ran >> ran.txt");
    std::fs::write(local_dir(&env, "bad").join("command.json"), "{ not json").unwrap();
    let run = env.bullpen(&["resume", "bad"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "was not recorded on this machine");
    assert_contains(&run.stderr, "command.json is malformed");
    assert_eq!(
        std::fs::read_to_string(wt.join("ran.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn an_edited_or_forged_combined_file_authorises_nothing() {
    let env = setup();
    let created_of = |id: &str| local_dir(&env, id).join("created.json");
    // The record's command edited: the local file's command decides.
    let wt = env.spawn_sh("edited", "echo ran >> ran.txt");
    env.edit_record("edited", |r| {
        r["command"] = json!(["sh", "-c", "echo evil >> ran.txt"])
    });
    let run = env.bullpen(&["resume", "edited"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "is not the one this machine recorded");
    assert_eq!(
        std::fs::read_to_string(wt.join("ran.txt")).unwrap(),
        "ran\n"
    );

    // A combined file that is not what bullpen writes (its command not a
    // command): neither the command nor the worktree is this machine's.
    let forged = env.spawn_sh("forged", COMMIT);
    let mut value = read_json(&created_of("forged"));
    value["command"] = json!("sh -c 'echo evil'");
    write_json(&created_of("forged"), &value);
    // Its path moved elsewhere: the worktree is not the one created here.
    let moved = env.spawn_sh("moved", COMMIT);
    let mut value = read_json(&created_of("moved"));
    value["worktree"] = json!(forged.to_str().unwrap());
    write_json(&created_of("moved"), &value);
    // Garbage in its place.
    let garbage = env.spawn_sh("garbage", COMMIT);
    std::fs::write(created_of("garbage"), "{\"schema\": 1, ").unwrap();

    for id in ["forged", "garbage"] {
        let run = env.bullpen(&["resume", id]);
        assert_eq!(run.code(), 125, "{id}: {}", run.stderr);
        assert_contains(&run.stderr, "was not recorded on this machine");
        assert_contains(&run.stderr, "created.json is malformed");
    }
    for id in ["forged", "moved", "garbage"] {
        push(&env, id);
    }
    let (_, entries) = gc(&env, &[]);
    for (id, wt) in [
        ("forged", &forged),
        ("moved", &moved),
        ("garbage", &garbage),
    ] {
        let e = session(&entries, id);
        assert_eq!(e["action"], "kept", "{id}: {e}");
        assert!(wt.join("work.txt").exists(), "{id}");
    }
    assert_contains(
        session(&entries, "garbage")["reason"].as_str().unwrap(),
        "nothing on this machine shows bullpen created its worktree",
    );
    let run = env.bullpen(&["rm", "--force", "moved"]);
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert!(moved.join("work.txt").exists());
}
