package io.kvs.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import javax.imageio.ImageIO;

/**
 * Grouped bar charts drawn with Java2D into a PNG, for benchmark reports: a grid of panels, each
 * with groups along the x axis (e.g. workloads) and one bar per series in each group (e.g. the
 * compared systems), the value written above every bar. Runs headless (set {@code
 * java.awt.headless=true} before the first call; {@link #write} does it if nobody did).
 */
public final class BarChart {
  private static final Color[] SERIES_COLORS = {
    new Color(0x1b9e77),
    new Color(0x7570b3),
    new Color(0xd95f02),
    new Color(0xe7298a),
    new Color(0x66a61e),
    new Color(0xe6ab02)
  };
  private static final int PANEL_WIDTH_MIN = 560;
  private static final int PANEL_HEIGHT = 330;
  private static final int BAR_WIDTH_MAX = 34;
  private static final int MARGIN = 24;
  private static final int HEADER_HEIGHT = 70;

  private BarChart() {}

  /**
   * One panel.
   *
   * @param title shown above the panel
   * @param axisLabel the unit of the values, shown along the y axis
   * @param groups labels along the x axis
   * @param values {@code values[group][series]}; NaN draws no bar
   */
  public record Panel(String title, String axisLabel, List<String> groups, double[][] values) {
    public Panel {
      Objects.requireNonNull(title, "title");
      Objects.requireNonNull(axisLabel, "axisLabel");
      groups = List.copyOf(groups);
      if (values.length != groups.size()) {
        throw new IllegalArgumentException(
            "values has " + values.length + " groups, labels " + groups.size());
      }
    }
  }

  /**
   * Draws {@code panels} in a grid of {@code columns} columns under {@code title} and a legend of
   * {@code series}, and writes the PNG to {@code file} (creating its directory).
   */
  public static void write(
      Path file, String title, List<String> series, List<Panel> panels, int columns)
      throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    if (panels.isEmpty() || columns < 1) {
      throw new IllegalArgumentException("need at least one panel and one column");
    }
    int groupsMax = panels.stream().mapToInt(p -> p.groups().size()).max().orElse(1);
    int panelWidth =
        Math.max(PANEL_WIDTH_MIN, 90 + groupsMax * (series.size() * BAR_WIDTH_MAX + 26));
    int rows = (panels.size() + columns - 1) / columns;
    int width = MARGIN + columns * (panelWidth + MARGIN);
    int height = HEADER_HEIGHT + rows * (PANEL_HEIGHT + MARGIN) + MARGIN / 2;

    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(
          RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
      g.drawString(title, MARGIN, 30);
      drawLegend(g, series, MARGIN, 52);
      for (int i = 0; i < panels.size(); i++) {
        int x = MARGIN + (i % columns) * (panelWidth + MARGIN);
        int y = HEADER_HEIGHT + (i / columns) * (PANEL_HEIGHT + MARGIN);
        drawPanel(g, panels.get(i), series.size(), x, y, panelWidth, PANEL_HEIGHT);
      }
    } finally {
      g.dispose();
    }
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer available");
    }
  }

  private static void drawLegend(Graphics2D g, List<String> series, int x, int y) {
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    FontMetrics metrics = g.getFontMetrics();
    for (int i = 0; i < series.size(); i++) {
      g.setColor(color(i));
      g.fillRect(x, y - 11, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(series.get(i), x + 20, y + 1);
      x += 20 + metrics.stringWidth(series.get(i)) + 24;
    }
  }

  private static void drawPanel(
      Graphics2D g, Panel panel, int seriesCount, int x, int y, int width, int height) {
    int left = x + 64;
    int right = x + width - 10;
    int top = y + 44;
    int bottom = y + height - 30;

    g.setColor(new Color(0xf7f7f7));
    g.fillRect(x, y, width, height);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
    g.drawString(panel.title(), x + 8, y + 19);

    double max = 0;
    for (double[] group : panel.values()) {
      for (double value : group) {
        if (Double.isFinite(value)) {
          max = Math.max(max, value);
        }
      }
    }
    // Head room above the tallest bar for its label.
    double headroom = max * 1.15;
    double step = niceStep(headroom > 0 ? headroom / 5 : 1);
    double axisMax = Math.max(step, Math.ceil(headroom / step) * step);

    // Grid lines and y labels.
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    FontMetrics small = g.getFontMetrics();
    for (double tick = 0; tick <= axisMax * 1.0001; tick += step) {
      int ty = bottom - (int) Math.round((bottom - top) * tick / axisMax);
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, ty, right, ty);
      g.setColor(Color.DARK_GRAY);
      String label = compact(tick);
      g.drawString(label, left - 6 - small.stringWidth(label), ty + 4);
    }
    AffineTransform saved = g.getTransform();
    g.rotate(-Math.PI / 2, x + 14, (top + bottom) / 2.0);
    g.drawString(
        panel.axisLabel(),
        x + 14 - small.stringWidth(panel.axisLabel()) / 2,
        (top + bottom) / 2 + 4);
    g.setTransform(saved);
    g.setColor(Color.BLACK);
    g.setStroke(new BasicStroke(1f));
    g.drawLine(left, bottom, right, bottom);

    int groups = panel.groups().size();
    if (groups == 0) {
      return;
    }
    double slot = (right - left) / (double) groups;
    int barWidth =
        (int) Math.max(3, Math.min(BAR_WIDTH_MAX, (slot - 14) / Math.max(1, seriesCount)));
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
    FontMetrics tiny = g.getFontMetrics();
    for (int group = 0; group < groups; group++) {
      double[] values = panel.values()[group];
      int groupLeft = (int) Math.round(left + group * slot + (slot - barWidth * seriesCount) / 2);
      for (int series = 0; series < Math.min(seriesCount, values.length); series++) {
        double value = values[series];
        if (!Double.isFinite(value)) {
          continue;
        }
        int barHeight = (int) Math.round((bottom - top) * Math.max(0, value) / axisMax);
        int barX = groupLeft + series * barWidth;
        g.setColor(color(series));
        g.fillRect(barX, bottom - barHeight, barWidth - 2, barHeight);
        // The value above the bar, turned sideways when the bar is too narrow for it.
        g.setColor(Color.BLACK);
        String label = compact(value);
        int labelWidth = tiny.stringWidth(label);
        if (labelWidth <= barWidth) {
          g.drawString(label, barX + (barWidth - 2 - labelWidth) / 2, bottom - barHeight - 3);
        } else {
          AffineTransform before = g.getTransform();
          int anchorX = barX + (barWidth - 2) / 2 + 4;
          int anchorY = bottom - barHeight - 3;
          g.rotate(-Math.PI / 2, anchorX, anchorY);
          g.drawString(label, anchorX, anchorY);
          g.setTransform(before);
        }
      }
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      FontMetrics labels = g.getFontMetrics();
      String name = panel.groups().get(group);
      int center = (int) Math.round(left + group * slot + slot / 2);
      g.drawString(name, center - labels.stringWidth(name) / 2, bottom + 17);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
    }
  }

  private static Color color(int series) {
    return SERIES_COLORS[series % SERIES_COLORS.length];
  }

  /** The smallest of 1, 2, 2.5, 5 times a power of ten that is at least {@code rough}. */
  static double niceStep(double rough) {
    double power = Math.pow(10, Math.floor(Math.log10(rough)));
    for (double factor : new double[] {1, 2, 2.5, 5, 10}) {
      if (factor * power >= rough) {
        return factor * power;
      }
    }
    return 10 * power;
  }

  /** A short label: 3 significant digits, k/M suffixes. */
  public static String compact(double value) {
    if (!Double.isFinite(value)) {
      return "n/a";
    }
    double magnitude = Math.abs(value);
    if (magnitude >= 1e6) {
      return trim(value / 1e6) + "M";
    }
    if (magnitude >= 1e4) {
      return trim(value / 1e3) + "k";
    }
    return trim(value);
  }

  private static String trim(double value) {
    double magnitude = Math.abs(value);
    String text =
        magnitude >= 100
            ? String.format(Locale.ROOT, "%.0f", value)
            : magnitude >= 10
                ? String.format(Locale.ROOT, "%.1f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    if (text.contains(".")) {
      text = text.replaceFirst("0+$", "").replaceFirst("\\.$", "");
    }
    return text;
  }
}
