//! The tables for people (`ls`, `ls --remote`), fitted to the terminal's width:
//! drawing apart from the rows and cells (`table.rs`) that `--json` shares.
//!
//! The ID is the cell people type, so it is never cut below what tells it apart
//! from the others (its shortest unique prefix, then `…`). To fit, in order:
//! cells with a shorter form take it (STATE drops what the run is doing), the
//! cuttable cells are cut, widest first, down to their least (WORKTREE from its
//! start), and whole columns are hidden from the least telling one, each hiding
//! announced under the table; only then is a line itself cut.

use std::borrow::{Borrow, Cow};
use std::io::Write;

use std::path::Path;

use crate::model::command::escaped;

use super::table::{
    agent_cell, branch_cell, changes_cell, color_of, published_cell, remote_state_cell,
    screen_cell, shorten, state_cell, state_cell_short, tilde, truncate, width, Row, View,
};

/// A column of the table.
pub struct Column {
    pub header: &'static str,
    /// The narrowest it is cut to (`None`: never cut).
    pub min: Option<usize>,
    /// Cut at the start, keeping the end (paths).
    pub from_start: bool,
    /// Hidden when the table cannot fit otherwise, lowest first (`None`: never).
    pub hide: Option<u8>,
    /// Its width, known before its cells (`ls --status`'s, whose rows are
    /// drawn as their status comes): such a cell is never cut, a wider one
    /// pushes the rest of its line.
    pub width: Option<usize>,
}

impl Column {
    /// A column that is never cut nor hidden.
    pub fn fixed(header: &'static str) -> Column {
        Column {
            header,
            min: None,
            from_start: false,
            hide: None,
            width: None,
        }
    }

    /// A column hidden (rank `rank`) when nothing else makes the table fit.
    pub fn hideable(header: &'static str, rank: u8) -> Column {
        Column {
            hide: Some(rank),
            ..Column::fixed(header)
        }
    }
}

/// One cell: its text, and the shorter form it takes when the table is too wide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub short: Option<String>,
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, short: None }
    }
}

impl Cell {
    fn get(&self, short: bool) -> &str {
        match (&self.short, short) {
            (Some(s), true) => s,
            _ => &self.text,
        }
    }
}

const GAP: usize = 2;
/// The mark before each row: `* ` for the session the current directory is in.
const MARK: usize = 2;

/// What fits: the columns shown, each one's width, and whether cells take
/// their short form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub shown: Vec<usize>,
    pub widths: Vec<usize>,
    pub short: bool,
}

impl Layout {
    /// How many columns are not shown.
    pub fn hidden(&self, columns: usize) -> usize {
        columns - self.shown.len()
    }
}

/// Pure: the narrowest an id column may be: for each id its shortest prefix that
/// no other id starts with, plus the `…` (an id that is another's prefix whole).
/// The ids sorted, each one's longest common prefix with any other is the
/// longer of those with its neighbours: O(n log n), not a scan of all pairs
/// (1,000 fetched sessions made the scan a tenth of `ls --remote`).
pub fn unique_width(ids: &[&str]) -> usize {
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    (0..sorted.len())
        .map(|i| {
            let id = sorted[i];
            let before = i.checked_sub(1).map_or(0, |j| common(sorted[j], id));
            let after = sorted.get(i + 1).map_or(0, |next| common(id, next));
            let needed = before.max(after) + 1;
            match id.char_indices().nth(needed) {
                // The whole id is needed, or it is another's prefix.
                None => width(id),
                Some((end, _)) => width(&id[..end]) + 1,
            }
        })
        .max()
        .unwrap_or(0)
}

/// Pure: lay out `cells` (one `Vec` per row) under `columns` within `limit`.
pub fn layout(columns: &[Column], cells: &[Vec<Cell>], limit: Option<usize>) -> Layout {
    let natural = |shown: &[usize], short: bool| -> Vec<usize> {
        shown
            .iter()
            .map(|&i| match columns[i].width {
                Some(w) => w.max(width(columns[i].header)),
                None => cells
                    .iter()
                    .map(|row| width(row[i].get(short)))
                    .chain([width(columns[i].header)])
                    .max()
                    .unwrap_or(0),
            })
            .collect()
    };
    let total = |w: &[usize]| MARK + w.iter().sum::<usize>() + GAP * w.len().saturating_sub(1);
    let mut shown: Vec<usize> = (0..columns.len()).collect();
    let Some(limit) = limit else {
        let widths = natural(&shown, false);
        return Layout {
            shown,
            widths,
            short: false,
        };
    };
    let widths = natural(&shown, false);
    if total(&widths) <= limit {
        return Layout {
            shown,
            widths,
            short: false,
        };
    }
    let mut hide_order: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].hide.is_some())
        .collect();
    hide_order.sort_by_key(|&i| (columns[i].hide, std::cmp::Reverse(i)));
    let mut hide_order = hide_order.into_iter();
    loop {
        let mut widths = natural(&shown, true);
        // Cut the widest cuttable column by one until it fits or none can give.
        while total(&widths) > limit {
            let widest = (0..shown.len())
                .filter(|&k| columns[shown[k]].min.is_some_and(|m| widths[k] > m))
                .max_by_key(|&k| (widths[k], k));
            match widest {
                Some(k) => widths[k] -= 1,
                None => break,
            }
        }
        if total(&widths) <= limit {
            return Layout {
                shown,
                widths,
                short: true,
            };
        }
        match hide_order.next() {
            Some(i) => shown.retain(|&s| s != i),
            None => {
                return Layout {
                    shown,
                    widths,
                    short: true,
                }
            }
        }
    }
}

/// Lay out `cells` under `columns`, fitted to `limit`, each row after its mark,
/// the cell in column `paint_col` painted with `paints[row]` (an SGR sequence,
/// or empty); then `footer`, and a line naming the columns hidden, if any.
#[allow(clippy::too_many_arguments)]
pub fn draw(
    out: &mut dyn Write,
    columns: &[Column],
    cells: &[Vec<Cell>],
    marks: &[&str],
    paints: &[&str],
    paint_col: usize,
    footer: Option<String>,
    limit: Option<usize>,
) -> std::io::Result<()> {
    let drawing = Drawing::new(columns, cells, limit, paint_col);
    drawing.head(out)?;
    for ((row, mark), paint) in cells.iter().zip(marks).zip(paints) {
        drawing.line(out, row, mark, paint)?;
    }
    drawing.end(out, footer)
}

/// A table laid out once, then drawn a line at a time.
pub struct Drawing<'c> {
    columns: &'c [Column],
    fitted: Layout,
    limit: Option<usize>,
    paint_col: usize,
}

impl<'c> Drawing<'c> {
    /// Lay out `cells` (those known now: a column with a `width` is laid
    /// out by it) under `columns`, fitted to `limit`.
    pub fn new(
        columns: &'c [Column],
        cells: &[Vec<Cell>],
        limit: Option<usize>,
        paint_col: usize,
    ) -> Drawing<'c> {
        Drawing {
            fitted: layout(columns, cells, limit),
            columns,
            limit,
            paint_col,
        }
    }

    /// The header line.
    pub fn head(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let head: Vec<&str> = self
            .fitted
            .shown
            .iter()
            .map(|&i| self.columns[i].header)
            .collect();
        self.write(out, "  ", head, "")
    }

    /// One row after its mark, its cell in the painted column painted with
    /// `paint` (an SGR sequence, or empty).
    pub fn line(
        &self,
        out: &mut dyn Write,
        row: &[Cell],
        mark: &str,
        paint: &str,
    ) -> std::io::Result<()> {
        let texts: Vec<&str> = self
            .fitted
            .shown
            .iter()
            .map(|&i| row[i].get(self.fitted.short))
            .collect();
        self.write(out, mark, texts, paint)
    }

    fn write(
        &self,
        out: &mut dyn Write,
        mark: &str,
        row: Vec<&str>,
        paint: &str,
    ) -> std::io::Result<()> {
        let fitted = &self.fitted;
        let last = fitted.shown.len().saturating_sub(1);
        let mut text = String::with_capacity(mark.len() + 8 * row.len() + 64);
        text.push_str(mark);
        // The line's width without its colour, trailing blanks included: more
        // than the limit only if the line itself may have to be cut.
        let mut plain = width(mark);
        for (k, (&i, cell)) in fitted.shown.iter().zip(&row).enumerate() {
            let cell = self.cell(k, i, cell);
            let (on, off) = match (i == self.paint_col, paint.is_empty()) {
                (true, false) => (paint, "\x1b[0m"),
                _ => ("", ""),
            };
            text.push_str(on);
            text.push_str(&cell);
            text.push_str(off);
            let used = width(&cell);
            plain += used;
            if k < last {
                let pad = fitted.widths[k].saturating_sub(used) + GAP;
                text.extend(std::iter::repeat_n(' ', pad));
                plain += pad;
            }
        }
        match self.limit {
            Some(limit) if plain > limit => self.cut_line(out, mark, &row, limit, &text),
            _ => writeln!(out, "{}", text.trim_end()),
        }
    }

    /// The cell in the `k`th column shown (column `i`), cut to its width
    /// unless the column has a fixed one.
    fn cell<'a>(&self, k: usize, i: usize, cell: &'a str) -> Cow<'a, str> {
        match self.columns[i].width {
            None if width(cell) > self.fitted.widths[k] => Cow::Owned(truncate(
                cell,
                self.fitted.widths[k],
                self.columns[i].from_start,
            )),
            _ => Cow::Borrowed(cell),
        }
    }

    /// A line whose cells, padded, may be wider than `limit`: still too wide
    /// (a terminal narrower than the columns that are never cut nor hidden),
    /// the line itself is cut, colour and all; else `text`, as it is. A last
    /// cell left empty (a WORKTREE that only repeats the id) leaves no
    /// trailing blanks.
    fn cut_line(
        &self,
        out: &mut dyn Write,
        mark: &str,
        row: &[&str],
        limit: usize,
        text: &str,
    ) -> std::io::Result<()> {
        let fitted = &self.fitted;
        let last = fitted.shown.len().saturating_sub(1);
        let mut plain = String::from(mark);
        for (k, (&i, cell)) in fitted.shown.iter().zip(row).enumerate() {
            let cell = self.cell(k, i, cell);
            plain.push_str(&cell);
            if k < last {
                let pad = fitted.widths[k].saturating_sub(width(&cell)) + GAP;
                plain.extend(std::iter::repeat_n(' ', pad));
            }
        }
        match width(plain.trim_end()) > limit {
            true => writeln!(out, "{}", truncate(plain.trim_end(), limit, false)),
            false => writeln!(out, "{}", text.trim_end()),
        }
    }

    /// `footer`, then a line naming the columns hidden, if any.
    pub fn end(&self, out: &mut dyn Write, footer: Option<String>) -> std::io::Result<()> {
        let cut = |s: String| match self.limit {
            Some(limit) => truncate(&s, limit, false),
            None => s,
        };
        if let Some(footer) = footer {
            writeln!(out, "{}", cut(footer))?;
        }
        match self.fitted.hidden(self.columns.len()) {
            0 => {}
            1 => writeln!(
                out,
                "{}",
                cut("(1 column hidden; widen the terminal or use --json)".to_owned())
            )?,
            n => writeln!(
                out,
                "{}",
                cut(format!(
                    "({n} columns hidden; widen the terminal or use --json)"
                ))
            )?,
        }
        Ok(())
    }
}

/// ID (never cut below what tells the ids apart), and AGENT when some row has
/// an agent: the columns both tables start with.
fn leading_columns(ids: &[&str], with_agent: bool) -> Vec<Column> {
    let mut columns = vec![Column {
        min: Some(unique_width(ids).max("ID".len())),
        ..Column::fixed("ID")
    }];
    if with_agent {
        columns.push(Column::hideable("AGENT", 4));
    }
    columns
}

/// The widths of `ls --status`'s columns, known before any status is read:
/// CHANGES fits `12M 3D 40?` (a wider cell pushes the rest of its line),
/// PUBLISHED its header.
const CHANGES_WIDTH: usize = 10;
const PUBLISHED_WIDTH: usize = 9;

/// The human table: a mark, ID, STATE, BRANCH, (with `--status`) CHANGES and
/// PUBLISHED, WORKTREE; then the worktree root. Fitted to `view.width`: the ID
/// and WORKTREE cells are cut first (with `…`), then whole lines; a line never
/// wraps. Padding is computed on plain text so colour never misaligns.
pub fn render_table(out: &mut dyn Write, rows: &[Row], view: &View) -> std::io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let table = Table::new(rows, view);
    table.head(out)?;
    for (i, r) in rows.iter().enumerate() {
        table.line(out, i, r)?;
    }
    table.end(out)
}

/// [`render_table`] a line at a time: laid out from the rows as they are
/// before their status (`ls --status`'s columns have fixed widths), then each
/// row drawn as it comes.
pub struct Table<'v> {
    columns: Vec<Column>,
    fitted: Layout,
    /// Each row's WORKTREE cell.
    places: Vec<String>,
    with_agent: bool,
    with_status: bool,
    with_place: bool,
    with_screen: bool,
    footer: Option<String>,
    view: &'v View<'v>,
}

impl<'v> Table<'v> {
    pub fn new(rows: &[Row], view: &'v View<'v>) -> Table<'v> {
        let with_status = rows.iter().any(|r| r.with_status);
        let with_agent = rows.iter().any(|r| r.agent.is_some());
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let mut columns = leading_columns(&ids, with_agent);
        columns.extend([Column::fixed("STATE"), Column::hideable("BRANCH", 5)]);
        if with_status {
            columns.push(Column {
                width: Some(CHANGES_WIDTH),
                ..Column::hideable("CHANGES", 3)
            });
            columns.push(Column {
                width: Some(PUBLISHED_WIDTH),
                ..Column::hideable("PUBLISHED", 2)
            });
        }
        // The record's path (escaped: a hand edit cannot write to the terminal); a
        // worktree that is `<root>/<id>` only repeats the id, and is left out.
        let places: Vec<String> = rows
            .iter()
            .map(|r| escaped(&shorten(Path::new(&r.worktree), view.root, view.home)))
            .zip(rows)
            .map(|(place, r)| if place == r.id { String::new() } else { place })
            .collect();
        let with_place = places.iter().any(|p| !p.is_empty());
        if with_place {
            columns.push(Column {
                min: Some(8),
                from_start: true,
                ..Column::hideable("WORKTREE", 1)
            });
        }
        let with_screen = rows.iter().any(|r| r.screen.is_some());
        if with_screen {
            columns.push(Column {
                min: Some(8),
                ..Column::hideable("SCREEN", 0)
            });
        }
        let relative = rows.iter().any(|r| {
            Path::new(&r.worktree).starts_with(view.root) && Path::new(&r.worktree) != view.root
        });
        let mut table = Table {
            fitted: layout(&columns, &[], None),
            columns,
            places,
            with_agent,
            with_status,
            with_place,
            with_screen,
            footer: relative.then(|| format!("worktree root: {}", tilde(view.root, view.home))),
            view,
        };
        let cells: Vec<Vec<Cell>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| table.cells(i, r))
            .collect();
        table.fitted = layout(&table.columns, &cells, view.width);
        table
    }

    /// The cells of row `i`.
    fn cells(&self, i: usize, r: &Row) -> Vec<Cell> {
        let mut c: Vec<Cell> = vec![r.id.clone().into()];
        if self.with_agent {
            c.push(agent_cell(r).into());
        }
        c.push(Cell {
            text: state_cell(r, self.view.now),
            short: Some(state_cell_short(r, self.view.now)),
        });
        c.push(branch_cell(r).into());
        if self.with_status {
            c.push(changes_cell(r).into());
            c.push(published_cell(r).into());
        }
        if self.with_place {
            c.push(self.places.get(i).cloned().unwrap_or_default().into());
        }
        if self.with_screen {
            c.push(screen_cell(r).into());
        }
        c
    }

    fn drawing(&self) -> Drawing<'_> {
        Drawing {
            columns: &self.columns,
            fitted: self.fitted.clone(),
            limit: self.view.width,
            paint_col: if self.with_agent { 2 } else { 1 },
        }
    }

    pub fn head(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.drawing().head(out)
    }

    /// Row `i` (of the rows the table was made from), as it is now.
    pub fn line(&self, out: &mut dyn Write, i: usize, r: &Row) -> std::io::Result<()> {
        let mark = if r.current { "* " } else { "  " };
        let paint = if self.view.color { color_of(r) } else { "" };
        self.drawing().line(out, &self.cells(i, r), mark, paint)
    }

    /// The worktree root, and the columns hidden.
    pub fn end(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.drawing().end(out, self.footer.clone())
    }
}

/// The colour of each row's STATE cell (none without colour).
fn paints<R: Borrow<Row>>(rows: &[R], view: &View) -> Vec<&'static str> {
    rows.iter()
        .map(|r| if view.color { color_of(r.borrow()) } else { "" })
        .collect()
}

/// The table of fetched sessions (`ls --remote`): `<remote>/<id>`, what its
/// record says and when it said it, and the commits of its fetched branch.
/// The rows as they are or boxed (`ls::remote::remote_rows`).
pub fn render_remote_table<R: Borrow<Row>>(
    out: &mut dyn Write,
    rows: &[R],
    view: &View,
) -> std::io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let rows: Vec<&Row> = rows.iter().map(Borrow::borrow).collect();
    let with_agent = rows.iter().any(|r| r.agent.is_some());
    let names: Vec<String> = rows
        .iter()
        .map(|r| format!("{}/{}", r.remote.as_deref().unwrap_or(""), r.id))
        .collect();
    let ids: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut columns = leading_columns(&ids, with_agent);
    drop(ids);
    columns.extend([
        Column {
            min: Some(12),
            ..Column::fixed("STATE")
        },
        Column::hideable("BRANCH", 5),
    ]);
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .zip(names)
        .map(|(r, name)| {
            let mut c: Vec<Cell> = Vec::with_capacity(4);
            c.push(name.into());
            if with_agent {
                c.push(agent_cell(r).into());
            }
            let (text, short) = remote_state_cell(r, view.now);
            c.push(Cell {
                text,
                short: Some(short),
            });
            c.push(branch_cell(r).into());
            c
        })
        .collect();
    let marks = vec!["  "; rows.len()];
    let state_col = if with_agent { 2 } else { 1 };
    let paints = paints(&rows, view);
    draw(
        out, &columns, &cells, &marks, &paints, state_col, None, view.width,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_width::UnicodeWidthStr;

    fn cells(rows: &[&[&str]]) -> Vec<Vec<Cell>> {
        rows.iter()
            .map(|r| r.iter().map(|c| Cell::from(c.to_string())).collect())
            .collect()
    }

    #[test]
    fn an_id_keeps_what_tells_it_apart() {
        assert_eq!(unique_width(&["fix-login", "fix-logout", "tests"]), 9);
        assert_eq!(unique_width(&["fix-login", "tests"]), 2);
        assert_eq!(unique_width(&["fix", "fix-login"]), 5);
        assert_eq!(unique_width(&["alone"]), 2);
        assert_eq!(unique_width(&[]), 0);
    }

    /// The sorted form answers as the scan of all pairs did, duplicates,
    /// prefixes and wide characters included.
    #[test]
    fn unique_width_is_the_scan_of_all_pairs() {
        fn scan(ids: &[&str]) -> usize {
            ids.iter()
                .map(|id| {
                    let chars: Vec<char> = id.chars().collect();
                    let mut prefix = String::new();
                    for (n, c) in chars.iter().enumerate() {
                        prefix.push(*c);
                        if !ids.iter().any(|o| o != id && o.starts_with(&prefix)) {
                            return match n + 1 == chars.len() {
                                true => id.width(),
                                false => prefix.width() + 1,
                            };
                        }
                    }
                    id.width()
                })
                .max()
                .unwrap_or(0)
        }
        let words = [
            "a",
            "ab",
            "abc",
            "b",
            "ba",
            "fix",
            "fix-l",
            "x\u{4e16}y",
            "x\u{4e16}z",
            "",
            "ab",
        ];
        for mask in 0u32..(1 << words.len()) {
            let ids: Vec<&str> = (0..words.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| words[i])
                .collect();
            assert_eq!(unique_width(&ids), scan(&ids), "{ids:?}");
        }
    }

    #[test]
    fn short_forms_come_first_then_cuts_then_hidden_columns() {
        let columns = [
            Column {
                min: Some(3),
                ..Column::fixed("ID")
            },
            Column::fixed("STATE"),
            Column::hideable("CHANGES", 2),
            Column {
                min: Some(8),
                from_start: true,
                ..Column::hideable("WORKTREE", 1)
            },
        ];
        let mut rows = cells(&[&["fix-login", "running 5m", "clean", "/far/away/fix-login"]]);
        rows[0][1].short = Some("run".to_owned());
        let wide = layout(&columns, &rows, Some(200));
        assert_eq!((wide.short, wide.shown.len()), (false, 4));
        // 2 + 9 + 2 + 10 + 2 + 7 + 2 + 19 = 53: the short STATE saves 5.
        let short = layout(&columns, &rows, Some(48));
        assert_eq!(
            (short.short, short.widths.clone()),
            (true, vec![9, 5, 7, 19])
        );
        // Then WORKTREE is cut to 8, ID to 3.
        let cut = layout(&columns, &rows, Some(31));
        assert_eq!((cut.widths.clone(), cut.hidden(4)), (vec![3, 5, 7, 8], 0));
        // Then WORKTREE goes (and ID need not be cut as far), then CHANGES.
        let hidden = layout(&columns, &rows, Some(26));
        assert_eq!(
            (hidden.shown.clone(), hidden.widths.clone()),
            (vec![0, 1, 2], vec![8, 5, 7])
        );
        assert_eq!(hidden.hidden(4), 1);
        let two = layout(&columns, &rows, Some(20));
        assert_eq!((two.shown.clone(), two.hidden(4)), (vec![0, 1], 2));
    }
}
