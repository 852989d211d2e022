package io.kvs.bench.cluster;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The status page's DOM as chromium serialized it, read the way the page lays it out: tables by id,
 * rows by their {@code data-*} key, cells by class. Text is unescaped from the serialization.
 */
final class RenderedStatusPage {
  private static final Pattern ROW =
      Pattern.compile("<tr data-(?:region|server|key|master)=\"([^\"]*)\"[^>]*>(.*?)</tr>");
  private static final Pattern CELL =
      Pattern.compile("<t[dh](?: class=\"([^\"]*)\")?>(.*?)</t[dh]>");
  private static final Pattern TAG = Pattern.compile("<[^>]*>");

  private final String dom;

  RenderedStatusPage(String dom) {
    this.dom = dom;
  }

  String dom() {
    return dom;
  }

  /** The rows of table {@code id}: key to (cell class to text); the summary's by its name. */
  Map<String, Map<String, String>> rows(String tableId) {
    String open = "<table id=\"" + tableId + "\">";
    int start = dom.indexOf(open);
    if (start < 0) {
      throw new AssertionError("no table " + tableId + " in the rendered page:\n" + dom);
    }
    String table = dom.substring(start, dom.indexOf("</table>", start));
    Map<String, Map<String, String>> rows = new LinkedHashMap<>();
    Matcher row = ROW.matcher(table);
    while (row.find()) {
      Map<String, String> cells = new LinkedHashMap<>();
      Matcher cell = CELL.matcher(row.group(2));
      while (cell.find()) {
        cells.put(cell.group(1) == null ? "name" : cell.group(1), text(cell.group(2)));
      }
      rows.put(text(row.group(1)), cells);
    }
    return rows;
  }

  /** The text of the element with {@code id}. */
  String textOf(String id) {
    Matcher element =
        Pattern.compile("<(\\w+) id=\"" + Pattern.quote(id) + "\"[^>]*>(.*?)</\\1>").matcher(dom);
    if (!element.find()) {
      throw new AssertionError("no element " + id + " in the rendered page:\n" + dom);
    }
    return text(element.group(2));
  }

  /** {@code html} without its tags, its character references resolved. */
  static String text(String html) {
    return TAG.matcher(html)
        .replaceAll("")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
  }
}
