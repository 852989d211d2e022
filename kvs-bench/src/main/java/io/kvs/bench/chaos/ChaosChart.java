package io.kvs.bench.chaos;

import io.kvs.bench.BarChart;
import io.kvs.bench.chaos.FaultKind.Family;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * The campaign's chart (PNG, Java2D, headless): successful operations per second over the run, with
 * every fault drawn as a band from its injection to its heal (dark) and on to full strength
 * (light), colored by family, its number above it; a legend names the families and a list under the
 * plot names each number's kind and victim.
 */
final class ChaosChart {
  private static final int WIDTH = 1400;
  private static final int PLOT_HEIGHT = 360;
  private static final int LEFT = 70;
  private static final int RIGHT = 20;
  private static final int TOP = 70;
  private static final int LIST_LINE = 15;
  private static final int LIST_COLUMNS = 3;
  private static final Color LINE = new Color(0x1b9e77);
  private static final Map<Family, Color> COLORS =
      Map.of(
          Family.SERVER, new Color(0xd95f02),
          Family.MASTER, new Color(0x7570b3),
          Family.ADMIN, new Color(0x66a61e),
          Family.STRANGER, new Color(0xe7298a));

  private ChaosChart() {}

  /**
   * Draws {@code perSecond} with {@code faults} (times in nanoTime, {@code originNanos} is second
   * 0) under {@code title} into {@code file}.
   */
  static void write(
      Path file, String title, double[] perSecond, List<FaultRecord> faults, long originNanos)
      throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    int rows = (faults.size() + LIST_COLUMNS - 1) / LIST_COLUMNS;
    int height = TOP + PLOT_HEIGHT + 50 + rows * LIST_LINE + 10;
    BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      g.drawString(title, LEFT, 24);
      legend(g);
      plot(g, perSecond, faults, originNanos);
      list(g, faults, TOP + PLOT_HEIGHT + 50);
    } finally {
      g.dispose();
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    ImageIO.write(image, "png", file.toFile());
  }

  private static void legend(Graphics2D g) {
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    int x = LEFT;
    for (Family family : Family.values()) {
      g.setColor(COLORS.get(family));
      g.fillRect(x, 36, 14, 10);
      g.setColor(Color.BLACK);
      String name = family.name().toLowerCase(java.util.Locale.ROOT) + " faults";
      g.drawString(name, x + 18, 46);
      x += 30 + g.getFontMetrics().stringWidth(name);
    }
    g.setColor(LINE);
    g.fillRect(x, 40, 14, 3);
    g.setColor(Color.BLACK);
    g.drawString(
        "successful operations per second (dark band: fault on; light: until full strength)",
        x + 18,
        46);
  }

  private static void plot(Graphics2D g, double[] values, List<FaultRecord> faults, long origin) {
    int x0 = LEFT;
    int x1 = WIDTH - RIGHT;
    int y1 = TOP;
    int y0 = TOP + PLOT_HEIGHT;
    double seconds = Math.max(1, values.length - 1);
    double max = 1;
    for (double value : values) {
      max = Math.max(max, value);
    }
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
    for (FaultRecord fault : faults) {
      if (!fault.ran()) {
        continue;
      }
      Color color = COLORS.get(fault.kind().family);
      double injected = (fault.injectedNanos() - origin) / 1e9;
      double healed = end(fault.healedNanos(), origin, injected);
      double whole = end(fault.fullStrengthNanos(), origin, healed);
      int xa = x(injected, seconds, x0, x1);
      int xb = Math.max(xa + 1, x(healed, seconds, x0, x1));
      int xc = Math.max(xb, x(whole, seconds, x0, x1));
      int top = fault.overlapping ? y1 + (y0 - y1) / 2 : y1;
      g.setColor(new Color(color.getRed(), color.getGreen(), color.getBlue(), 110));
      g.fillRect(xa, top, xb - xa, y0 - top);
      g.setColor(new Color(color.getRed(), color.getGreen(), color.getBlue(), 40));
      g.fillRect(xb, top, xc - xb, y0 - top);
      g.setColor(color.darker());
      g.drawString(Integer.toString(fault.number), xa, top - 2 - (fault.number % 2) * 10);
    }
    g.setColor(Color.GRAY);
    g.setStroke(new BasicStroke(1f));
    g.drawLine(x0, y0, x1, y0);
    g.drawLine(x0, y0, x0, y1);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    g.drawString(BarChart.compact(max) + " ops/s", 4, y1 + 4);
    g.drawString("0", x0 - 14, y0 + 4);
    g.drawString(BarChart.compact(seconds) + " s", x1 - 40, y0 + 16);
    g.setColor(LINE);
    g.setStroke(new BasicStroke(1.2f));
    for (int i = 1; i < values.length; i++) {
      int ya = y0 - (int) Math.round((y0 - y1) * values[i - 1] / max);
      int yb = y0 - (int) Math.round((y0 - y1) * values[i] / max);
      g.drawLine(x(i - 1, seconds, x0, x1), ya, x(i, seconds, x0, x1), yb);
    }
  }

  private static void list(Graphics2D g, List<FaultRecord> faults, int top) {
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    int column = (WIDTH - LEFT - RIGHT) / LIST_COLUMNS;
    int rows = (faults.size() + LIST_COLUMNS - 1) / LIST_COLUMNS;
    for (int i = 0; i < faults.size(); i++) {
      FaultRecord fault = faults.get(i);
      g.setColor(COLORS.get(fault.kind().family).darker());
      String text =
          fault.number
              + ". "
              + fault.kind().label
              + " "
              + fault.victim()
              + (fault.errors().isEmpty() ? "" : "  (FAILED)");
      g.drawString(
          text, LEFT + (i / Math.max(1, rows)) * column, top + (i % Math.max(1, rows)) * LIST_LINE);
    }
  }

  private static double end(long nanos, long origin, double otherwise) {
    return nanos == FaultRecord.NOT_YET ? otherwise : (nanos - origin) / 1e9;
  }

  private static int x(double second, double seconds, int x0, int x1) {
    return x0 + (int) Math.round((x1 - x0) * Math.max(0, Math.min(second, seconds)) / seconds);
  }
}
