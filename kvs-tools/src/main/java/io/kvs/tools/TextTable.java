package io.kvs.tools;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table for benchmark reports: a header, rows and optional separator lines; the first
 * {@code textColumns} columns are left-aligned, the rest (numbers) right-aligned.
 */
public final class TextTable {
  private final String[] header;
  private final int textColumns;
  private final List<String[]> rows = new ArrayList<>();

  public TextTable(int textColumns, String... header) {
    this.header = header.clone();
    this.textColumns = textColumns;
  }

  /** Adds a row; missing cells are blank. */
  public TextTable row(String... cells) {
    rows.add(Arrays.copyOf(cells, header.length));
    return this;
  }

  /** Adds a separator line. */
  public TextTable separator() {
    rows.add(null);
    return this;
  }

  @Override
  public String toString() {
    int[] widths = new int[header.length];
    for (int i = 0; i < header.length; i++) {
      widths[i] = header[i].length();
    }
    for (String[] row : rows) {
      if (row != null) {
        for (int i = 0; i < row.length; i++) {
          widths[i] = Math.max(widths[i], row[i] == null ? 0 : row[i].length());
        }
      }
    }
    int total = Arrays.stream(widths).sum() + 2 * (widths.length - 1);
    StringBuilder out = new StringBuilder();
    appendRow(out, header, widths);
    out.append("-".repeat(total)).append('\n');
    for (String[] row : rows) {
      if (row == null) {
        out.append("-".repeat(total)).append('\n');
      } else {
        appendRow(out, row, widths);
      }
    }
    return out.toString();
  }

  private void appendRow(StringBuilder out, String[] cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      String cell = cells[i] == null ? "" : cells[i];
      String padding = " ".repeat(widths[i] - cell.length());
      if (i > 0) {
        line.append("  ");
      }
      line.append(i < textColumns ? cell + padding : padding + cell);
    }
    out.append(line.toString().stripTrailing()).append('\n');
  }
}
