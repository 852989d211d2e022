package io.kvs.bench;

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
import java.util.Objects;
import javax.imageio.ImageIO;

/**
 * Time series drawn with Java2D into a PNG: one panel per series, stacked, values against seconds,
 * with vertical markers (e.g. the moments faults were injected). Runs headless.
 */
public final class LineChart {
  private static final int WIDTH = 1000;
  private static final int PANEL_HEIGHT = 260;
  private static final int LEFT = 70;
  private static final int RIGHT = 20;
  private static final int TOP = 40;
  private static final int BOTTOM = 36;
  private static final Color LINE = new Color(0x1b9e77);
  private static final Color MARKER = new Color(0xd95f02);

  private LineChart() {}

  /**
   * One panel.
   *
   * @param title shown above the panel
   * @param axisLabel the unit of the values
   * @param values one value per second from 0
   * @param markers seconds to mark with a vertical line
   */
  public record Panel(String title, String axisLabel, double[] values, List<Double> markers) {
    public Panel {
      Objects.requireNonNull(title, "title");
      Objects.requireNonNull(values, "values");
      markers = List.copyOf(markers);
    }
  }

  /** Draws {@code panels} under {@code title} and writes the PNG to {@code file}. */
  public static void write(Path file, String title, List<Panel> panels) throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    int height = 40 + panels.size() * PANEL_HEIGHT;
    BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, height);
      g.setColor(Color.BLACK);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
      g.drawString(title, LEFT, 26);
      for (int i = 0; i < panels.size(); i++) {
        drawPanel(g, panels.get(i), 40 + i * PANEL_HEIGHT);
      }
    } finally {
      g.dispose();
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    ImageIO.write(image, "png", file.toFile());
  }

  private static void drawPanel(Graphics2D g, Panel panel, int top) {
    int x0 = LEFT;
    int x1 = WIDTH - RIGHT;
    int y0 = top + PANEL_HEIGHT - BOTTOM;
    int y1 = top + TOP;
    double max = 1;
    for (double value : panel.values()) {
      max = Math.max(max, value);
    }
    double seconds = Math.max(1, panel.values().length - 1);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    g.setColor(Color.BLACK);
    g.drawString(panel.title(), x0, top + 22);
    g.setColor(Color.GRAY);
    g.drawLine(x0, y0, x1, y0);
    g.drawLine(x0, y0, x0, y1);
    g.drawString(BarChart.compact(max) + " " + panel.axisLabel(), 4, y1 + 4);
    g.drawString("0", x0 - 14, y0 + 4);
    g.drawString(BarChart.compact(seconds) + " s", x1 - 30, y0 + 18);
    g.setColor(MARKER);
    g.setStroke(new BasicStroke(1f));
    for (double marker : panel.markers()) {
      int x = x0 + (int) Math.round((x1 - x0) * marker / seconds);
      g.drawLine(x, y0, x, y1);
    }
    g.setColor(LINE);
    g.setStroke(new BasicStroke(1.5f));
    double[] values = panel.values();
    for (int i = 1; i < values.length; i++) {
      int xa = x0 + (int) Math.round((x1 - x0) * (i - 1) / seconds);
      int xb = x0 + (int) Math.round((x1 - x0) * i / seconds);
      int ya = y0 - (int) Math.round((y0 - y1) * values[i - 1] / max);
      int yb = y0 - (int) Math.round((y0 - y1) * values[i] / max);
      g.drawLine(xa, ya, xb, yb);
    }
  }
}
