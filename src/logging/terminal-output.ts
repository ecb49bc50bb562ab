/**
 * Stderr on a terminal, shared by log lines and a progress bar. The bar is drawn on the last
 * line without a newline and redrawn in place; a log line written as it is would continue that
 * line, and the bar would then be drawn over the log. Here a log line first clears the bar's
 * line, is written with line wrapping on (the bar turns it off while it is shown, which would
 * cut long messages at the terminal's width), and the bar is drawn again below it.
 */
const CLEAR_LINE = '\r\x1b[K';
const WRAP_ON = '\x1b[?7h';
const WRAP_OFF = '\x1b[?7l';

export class TerminalOutput {
  private redrawBar: (() => void) | undefined;

  constructor(private readonly write: (text: string) => void) {}

  /** While a bar is shown: `redraw` draws it again on the current line. */
  showBar(redraw: () => void): void {
    this.redrawBar = redraw;
  }

  hideBar(): void {
    this.redrawBar = undefined;
  }

  /** Writes text that ends with a newline (one or more lines of a log). */
  line(text: string): void {
    const redraw = this.redrawBar;
    if (redraw === undefined) {
      this.write(text);
      return;
    }
    this.write(`${CLEAR_LINE}${WRAP_ON}${text}${WRAP_OFF}`);
    redraw();
  }
}
