package io.github.vertxdedup.benchmarks.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.CategoryDataset;

/**
 * The plotting every benchmark report shares (jfreechart 1.5): bar charts in one style, and a PNG holding one or
 * more charts side by side. Reports build their datasets and call these; nothing here knows a benchmark.
 *
 * <p>Stateless and thread-safe. Drawing needs no display: {@link #writePng} sets {@code java.awt.headless}.
 */
public final class Plots {

  /** Bar colours, one per series in order (a colour-blind-safe palette); series past the last reuse it. */
  private static final Color[] PALETTE = {
      new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868), new Color(0xC44E52), new Color(0x8172B3),
      new Color(0x937860)};

  private Plots() {}

  /**
   * A vertical bar chart: categories along the x axis (labels tilted so long names fit), one bar per series in
   * each category, each bar labelled with its value.
   *
   * @param title the chart's title
   * @param valueAxis the label of the value (y) axis, with its unit
   * @param data the bars; may be empty (an empty chart)
   * @param valueFormat the {@link DecimalFormat} pattern of the bar labels, e.g. {@code "#,##0"}
   * @return the chart, to be adjusted further by the caller if needed
   * @throws IllegalArgumentException if {@code valueFormat} is not a valid pattern
   */
  public static JFreeChart barChart(String title, String valueAxis, CategoryDataset data, String valueFormat) {
    JFreeChart chart = ChartFactory.createBarChart(title, null, valueAxis, data, PlotOrientation.VERTICAL, true,
        false, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    CategoryAxis axis = plot.getDomainAxis();
    axis.setCategoryLabelPositions(CategoryLabelPositions.createUpRotationLabelPositions(Math.PI / 8));
    axis.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    BarRenderer bars = (BarRenderer) plot.getRenderer();
    bars.setBarPainter(new StandardBarPainter());
    bars.setShadowVisible(false);
    for (int i = 0; i < data.getRowCount(); i++) {
      bars.setSeriesPaint(i, PALETTE[Math.min(i, PALETTE.length - 1)]);
    }
    bars.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator("{2}", new DecimalFormat(valueFormat)));
    bars.setDefaultItemLabelsVisible(true);
    bars.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    return chart;
  }

  /**
   * Adds a subtitle line under the chart's title, in the style of the other charts.
   *
   * @param chart the chart
   * @param text the line
   */
  public static void subtitle(JFreeChart chart, String text) {
    chart.addSubtitle(new TextTitle(text, new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
  }

  /**
   * A dashed dark-grey horizontal line at a value of the range axis, for a target; add it with
   * {@code chart.getCategoryPlot().addRangeMarker(...)}.
   *
   * @param at the value, in the axis's unit
   * @return the marker
   */
  public static ValueMarker targetLine(double at) {
    return new ValueMarker(at, Color.DARK_GRAY,
        new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
  }

  /**
   * Draws the charts side by side, each {@code width / charts.size()} wide, on a white background, and writes
   * them as one PNG, creating the file's parent directories.
   *
   * @param png the file to write (replaced if it exists)
   * @param width the image's width, pixels
   * @param height the image's height, pixels
   * @param charts at least one chart
   * @throws IOException if the file cannot be written
   * @throws IllegalArgumentException if {@code charts} is empty or a size is not positive
   */
  public static void writePng(Path png, int width, int height, List<JFreeChart> charts) throws IOException {
    if (charts.isEmpty()) {
      throw new IllegalArgumentException("charts must hold at least one chart but was empty");
    }
    if (width <= 0 || height <= 0) {
      throw new IllegalArgumentException("width and height must be > 0 but were " + width + " x " + height);
    }
    System.setProperty("java.awt.headless", "true");
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    double each = (double) width / charts.size();
    for (int i = 0; i < charts.size(); i++) {
      charts.get(i).draw(g, new Rectangle2D.Double(i * each, 0, each, height));
    }
    g.dispose();
    Path parent = png.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    ImageIO.write(image, "png", png.toFile());
  }
}
