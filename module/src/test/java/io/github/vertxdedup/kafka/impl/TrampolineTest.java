package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The pump's trampoline: a call during a pass asks for another pass instead of recursing. */
class TrampolineTest {

  @Test
  void aCallDuringAPassRunsOneMorePassAfterItInsteadOfInsideIt() {
    List<String> events = new ArrayList<>();
    AtomicReference<Trampoline> self = new AtomicReference<>();
    int[] passes = {0};
    Trampoline t = new Trampoline(() -> {
      int pass = ++passes[0];
      events.add("begin " + pass);
      if (pass < 3) {
        events.add("asked again: " + self.get().run());
        events.add("asked again: " + self.get().run());
      }
      events.add("end " + pass);
    });
    self.set(t);

    assertThat(t.run()).isTrue();

    assertThat(events).containsExactly("begin 1", "asked again: false", "asked again: false", "end 1",
        "begin 2", "asked again: false", "asked again: false", "end 2", "begin 3", "end 3");
  }

  @Test
  void aDeepChainOfCallsCostsNoStack() {
    int[] passes = {0};
    AtomicReference<Trampoline> self = new AtomicReference<>();
    Trampoline t = new Trampoline(() -> {
      if (++passes[0] < 1_000_000) {
        self.get().run();
      }
    });
    self.set(t);

    t.run();

    assertThat(passes[0]).isEqualTo(1_000_000);
  }

  @Test
  void aPassThatThrowsLeavesItReadyToRunAgain() {
    int[] passes = {0};
    Trampoline t = new Trampoline(() -> {
      if (++passes[0] == 1) {
        throw new IllegalStateException("first pass");
      }
    });

    assertThatThrownBy(t::run).isInstanceOf(IllegalStateException.class).hasMessage("first pass");

    assertThat(t.run()).isTrue();
    assertThat(passes[0]).isEqualTo(2);
  }
}
