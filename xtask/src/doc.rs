// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask doc [--check]`: the documents' generated blocks rewritten from the code's
//! declarations and from committed data.
//!
//! A generated block is the fenced block right after a line
//! `<!-- generated: cargo xtask ARGS -->`. ARGS is a table the code declares (`kernels`,
//! `features`, `stats-fields`) or a bench that reads a results folder (`--from DIR`), so
//! no table in a document is typed by hand or measured anew.

use crate::repo_root;
use anyhow::{bail, Context, Result};
use std::process::Command;

const MARK: &str = "<!-- generated: cargo xtask ";

/// `<!-- cited: N N ... WHY -->`: figures a document quotes from elsewhere (not its data).
const CITED: &str = "<!-- cited: ";

/// The tables the code declares, printed by the xtask command of that name.
const DECLARED: &[&str] = &["kernels", "features", "stats-fields"];

/// The documents with generated blocks.
const DOCUMENTS: &[&str] = &[
    "README.md",
    "BENCHMARKS.md",
    "docs/DESIGN.md",
    "docs/STATS.md",
    "docs/KERNELS.md",
    "docs/BENCHMARKS-HISTORY.md",
    "docs/BENCHMARKS-INVESTIGATIONS.md",
];

/// The benchmark documents: every number in their prose is printed by a generated
/// block of one of them (the first page quotes the others' tables).
const BENCH_SET: &[&str] = &[
    "BENCHMARKS.md",
    "docs/BENCHMARKS-INVESTIGATIONS.md",
    "docs/BENCHMARKS-HISTORY.md",
];

/// `cargo xtask features` / `stats-fields`: what the freshly built scx_sis prints with
/// `flag` (a table declared in its source).
pub fn print_from_scheduler(flag: &str) -> Result<i32> {
    crate::build_scheduler()?;
    let out = Command::new(crate::scx_sis_bin())
        .arg(flag)
        .output()
        .with_context(|| format!("running scx_sis {flag}"))?;
    anyhow::ensure!(out.status.success(), "scx_sis {flag} failed");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(0)
}

/// The output of `xtask ARGS` (this binary), trimmed.
fn generate(args: &str) -> Result<String> {
    anyhow::ensure!(
        DECLARED.contains(&args) || args.split_whitespace().any(|a| a == "--from"),
        "`{args}`: a generated table must come from committed data (--from DIR)"
    );
    let me = std::env::current_exe().context("locating the xtask binary")?;
    let out = Command::new(me)
        .args(args.split_whitespace())
        .current_dir(repo_root())
        .output()
        .with_context(|| format!("running xtask {args}"))?;
    if !out.status.success() {
        bail!(
            "xtask {args} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// Rewrite every generated block of `text`; returns the new text and the blocks that
/// changed (their command lines).
pub fn regenerate(
    text: &str,
    run: impl Fn(&str) -> Result<String>,
) -> Result<(String, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let (mut out, mut changed) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        out.push(lines[i].to_string());
        let Some(args) = lines[i]
            .strip_prefix(MARK)
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            i += 1;
            continue;
        };
        anyhow::ensure!(
            lines.get(i + 1) == Some(&"```"),
            "line {}: a generated marker must be followed by a ``` block",
            i + 1
        );
        let end = (i + 2..lines.len())
            .find(|&j| lines[j] == "```")
            .with_context(|| format!("line {}: the ``` block is not closed", i + 2))?;
        let old = lines[i + 2..end].join("\n");
        let new = run(args)?;
        if old != new {
            changed.push(args.to_string());
        }
        out.push("```".into());
        out.extend(new.lines().map(str::to_string));
        out.push("```".into());
        i = end + 1;
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Ok((s, changed))
}

/// The decimal numbers of `text` outside backticks (`1.23`, not `7` or `6.18.15`);
/// `in_code` says whether the line starts inside a code span and is left as it ends.
fn decimals<'a>(text: &'a str, in_code: &mut bool) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            *in_code = !*in_code;
        }
        if *in_code {
            continue;
        }
        let b = part.as_bytes();
        let mut j = 0;
        while j < b.len() {
            let starts = b[j].is_ascii_digit()
                && (j == 0
                    || !(b[j - 1].is_ascii_alphanumeric() || b[j - 1] == b'.' || b[j - 1] == b'_'));
            if !starts {
                j += 1;
                continue;
            }
            let k = (j..b.len())
                .find(|&k| !(b[k].is_ascii_digit() || b[k] == b'.'))
                .unwrap_or(b.len());
            let tok = part[j..k].trim_end_matches('.');
            let followed = k < b.len() && (b[k].is_ascii_alphabetic() || b[k] == b'_');
            if tok.matches('.').count() == 1 && !followed {
                out.push(tok);
            }
            j = k;
        }
    }
    out
}

/// The prose numbers of `text` (decimals outside code blocks) that no generated block
/// of it or of `also` prints at their precision and no `cited:` line names: (line,
/// number).
pub fn unquoted_numbers(text: &str, also: &str) -> Vec<(usize, String)> {
    let printed: Vec<f64> = [text, also].into_iter().flat_map(printed_numbers).collect();
    let (mut prose, mut cited) = (Vec::new(), Vec::<&str>::new());
    let (mut in_block, mut in_code) = (false, false);
    for (n, l) in text.lines().enumerate() {
        if let Some(c) = l.strip_prefix(CITED) {
            cited.extend(c.split_whitespace());
        } else if l.starts_with("```") {
            in_block = !in_block;
        } else if !in_block && !l.starts_with(MARK) {
            prose.extend(decimals(l, &mut in_code).into_iter().map(|t| (n + 1, t)));
        }
    }
    prose
        .into_iter()
        .filter(|(_, t)| !cited.contains(t))
        .filter(|(_, t)| {
            let places = t.split('.').nth(1).map_or(0, str::len) as i32;
            let v: f64 = t.parse().unwrap_or(f64::NAN);
            let half = 0.5 * 10f64.powi(-places) + 1e-9;
            !printed.iter().any(|p| (p - v).abs() <= half)
        })
        .map(|(n, t)| (n, t.to_string()))
        .collect()
}

/// `cargo xtask doc`: rewrite the blocks of every document; with `check`, fail naming
/// each stale one.
pub fn doc(check: bool) -> Result<i32> {
    let (mut blocks, mut stale) = (0, 0);
    for name in DOCUMENTS {
        let path = repo_root().join(name);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let (new, changed) = regenerate(&text, generate)?;
        blocks += text.lines().filter(|l| l.starts_with(MARK)).count();
        stale += changed.len();
        for c in &changed {
            println!("stale: `cargo xtask {c}` prints something else than {name} quotes");
        }
        if *name == "BENCHMARKS.md" {
            for svg in missing_plots(&text) {
                println!("stale: {name} does not show docs/img/{svg}");
                stale += 1;
            }
        }
        if BENCH_SET.contains(name) {
            let others = BENCH_SET.iter().filter(|o| *o != name);
            let also = others
                .map(|o| std::fs::read_to_string(repo_root().join(o)).context(o.to_string()))
                .collect::<Result<Vec<_>>>()?;
            for (line, num) in unquoted_numbers(&new, &also.join("\n")) {
                println!("stale: {name}:{line}: {num} is in no generated block");
                stale += 1;
            }
        }
        if !check {
            std::fs::write(&path, new).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    for name in linked_documents()? {
        let text = std::fs::read_to_string(repo_root().join(&name)).context(name.clone())?;
        // a folder, or a file that is no document (an image), reads as empty: it is there
        let read = |p: &str| match repo_root().join(p) {
            f if f.is_dir() || (f.exists() && !p.ends_with(".md")) => Ok(String::new()),
            f => std::fs::read_to_string(f),
        };
        for link in broken_links(&name, &text, read) {
            println!("stale: {name} links to {link}, which is not there");
            stale += 1;
        }
    }
    if !check {
        let (root, img) = (repo_root().join("results"), repo_root().join("docs/img"));
        crate::bench::headline::print_svgs(&root, &img)?;
    }
    if check {
        println!("doc: {blocks} generated table(s), {stale} stale");
        return Ok(if stale == 0 { 0 } else { 1 });
    }
    println!("doc: {blocks} generated table(s), {stale} rewritten");
    Ok(0)
}

/// README.md, BENCHMARKS.md and every document in docs/: the ones whose links are checked.
fn linked_documents() -> Result<Vec<String>> {
    let docs = std::fs::read_dir(repo_root().join("docs")).context("listing docs/")?;
    let mut names = vec!["README.md".to_string(), "BENCHMARKS.md".to_string()];
    for e in docs {
        let name = e.context("listing docs/")?.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".md") {
            names.push(format!("docs/{name}"));
        }
    }
    Ok(names)
}

/// GitHub's anchor of a heading: lower case, spaces to hyphens, other punctuation but
/// `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    let lower = heading.to_lowercase();
    let kept = lower
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'));
    kept.map(|c| if c == ' ' { '-' } else { c }).collect()
}

/// The anchors of `text`'s headings (outside fenced blocks).
fn anchors(text: &str) -> Vec<String> {
    let prose = outside_blocks(text);
    let headings = prose.lines().filter(|l| l.starts_with('#'));
    headings
        .map(|l| anchor(l.trim_start_matches('#').trim()))
        .collect()
}

/// The relative links of document `name` (`[x](path)`, `[x](path#anchor)`) whose file
/// `read` cannot open (a path relative to the repository root; a folder reads as
/// empty), or whose anchor names no heading of that file.
fn broken_links(
    name: &str,
    text: &str,
    read: impl Fn(&str) -> std::io::Result<String>,
) -> Vec<String> {
    let dir = std::path::Path::new(name)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let mut out = Vec::new();
    let prose = outside_blocks(text);
    for target in prose
        .split("](")
        .skip(1)
        .filter_map(|t| t.split(')').next())
    {
        if target.contains(':') || target.contains(' ') {
            continue;
        }
        let (file, frag) = target.split_once('#').unwrap_or((target, ""));
        let path = match file {
            "" => name.to_string(),
            f => normalize(&dir.join(f)),
        };
        // a heading is looked for in a document only (not in `src/x.rs#L10`)
        let heading = |t: &str| !path.ends_with(".md") || anchors(t).iter().any(|a| a == frag);
        let ok = match read(&path) {
            Ok(t) => frag.is_empty() || heading(&t),
            Err(_) => false,
        };
        if !ok {
            out.push(target.to_string());
        }
    }
    out
}

/// `text` without its fenced blocks.
fn outside_blocks(text: &str) -> String {
    let mut in_block = false;
    let keep = text.lines().filter(|l| {
        let fence = l.starts_with("```");
        in_block ^= fence;
        !in_block && !fence
    });
    keep.collect::<Vec<_>>().join("\n")
}

/// `a/b/../c` as `a/c`.
fn normalize(p: &std::path::Path) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.to_str().unwrap_or("").split('/') {
        match c {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            c => parts.push(c),
        }
    }
    parts.join("/")
}

/// The headline plots `text` does not show.
fn missing_plots(text: &str) -> Vec<String> {
    let shown = |svg: &String| text.contains(&format!("(docs/img/{svg})"));
    crate::bench::headline::HEADLINES
        .iter()
        .map(|h| h.svg())
        .filter(|s| !shown(s))
        .collect()
}

/// The numbers `text`'s generated blocks print.
fn printed_numbers(text: &str) -> Vec<f64> {
    let (mut printed, mut in_block, mut generated) = (Vec::new(), false, false);
    for l in text.lines() {
        if l.starts_with(MARK) {
            generated = true;
        } else if l.starts_with("```") {
            generated &= !in_block;
            in_block = !in_block;
        } else if in_block && generated {
            let nums = l.split(|c: char| !(c.is_ascii_digit() || c == '.'));
            printed.extend(nums.filter_map(|t| t.trim_matches('.').parse::<f64>().ok()));
        }
    }
    printed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_numbers_come_from_blocks() {
        let text = "a 0.82 [0.70,0.95] and `cmd 9.99` 6.18.15 7 s 0.5\n<!-- cited: 0.5 the seed -->\n<!-- generated: cargo xtask x --from d -->\n```\nsis 0.823 [0.701,0.951]\n```\nthen 0.77 and 1.0x\n";
        assert_eq!(unquoted_numbers(text, ""), [(7, "0.77".to_string())]);
        let also = "<!-- generated: cargo xtask y --from e -->\n```\nsis 0.77\n```\n";
        assert!(unquoted_numbers(text, also).is_empty());
        assert_eq!(
            decimals("p 1.5. v7.3 x_2.5 (3.25)", &mut false),
            ["1.5", "3.25"]
        );
        // a code span that wraps to the next line
        let mut code = false;
        assert_eq!(decimals("see `cmd --x", &mut code), Vec::<&str>::new());
        assert_eq!(decimals("1.5` then 2.5", &mut code), ["2.5"]);
    }

    #[test]
    fn links_need_their_file_and_heading() {
        let files = |p: &str| match p {
            "docs/A.md" => {
                Ok("# Top\n```\n# not a heading\n```\n## Where the CPUs go (2026-12-05)\n".into())
            }
            "README.md" => Ok(String::new()),
            _ => Err(std::io::Error::other("no such file")),
        };
        let text = "[a](docs/A.md) [b](docs/A.md#where-the-cpus-go-2026-12-05) \
                    [c](docs/A.md#not-a-heading) [d](docs/B.md) [e](https://x/y) [f](A.md)\n\
                    ```\n[g](in/a/block.md)\n```\n";
        assert_eq!(
            broken_links("README.md", text, files),
            ["docs/A.md#not-a-heading", "docs/B.md", "A.md"]
        );
        assert!(broken_links("docs/C.md", "[r](../README.md) [s](A.md#top)", files).is_empty());
        assert_eq!(
            anchor("HRTICK's irq_work on 7.0+ (x)"),
            "hrticks-irq_work-on-70-x"
        );
    }

    #[test]
    fn headline_plots_are_shown() {
        let all: Vec<String> = crate::bench::headline::HEADLINES
            .iter()
            .map(|h| h.svg())
            .collect();
        assert!(all.contains(&"headline-2b.svg".to_string()));
        let shown: String = all
            .iter()
            .map(|s| format!("![x](docs/img/{s})\n"))
            .collect();
        assert!(missing_plots(&shown).is_empty());
        assert_eq!(
            missing_plots(&shown.replace("headline-2b.svg", "x.svg")),
            ["headline-2b.svg"]
        );
    }

    #[test]
    fn blocks_regenerated_and_reported() {
        let text = "# t\n<!-- generated: cargo xtask bench x --from d -->\n```\nold\n```\nprose\n";
        let (new, changed) = regenerate(text, |a| Ok(format!("new for {a}"))).unwrap();
        assert_eq!(
            new,
            "# t\n<!-- generated: cargo xtask bench x --from d -->\n```\nnew for bench x --from d\n```\nprose\n"
        );
        assert_eq!(changed, ["bench x --from d"]);
        let (same, none) = regenerate(&new, |a| Ok(format!("new for {a}"))).unwrap();
        assert_eq!((same.as_str(), none.len()), (new.as_str(), 0));
        assert!(
            regenerate("<!-- generated: cargo xtask a -->\nno fence\n", |_| Ok(
                String::new()
            ))
            .is_err()
        );
        assert!(generate("bench tbench --runs 5").is_err());
    }
}
