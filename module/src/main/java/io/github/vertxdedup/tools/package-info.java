/**
 * Command-line tools: {@link io.github.vertxdedup.tools.JournalInspector} prints what a partition's journal holds.
 *
 * <p>May use: the persistence {@code journal} (what a record means), {@code window} (fingerprints) and the
 * service's options. Must not use the service's implementation ({@code impl.*}) or Vert.x: it reads the files of a
 * stopped or running partition without deploying one.
 */
package io.github.vertxdedup.tools;
