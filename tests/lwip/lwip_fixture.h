// lwip_fixture.h - what the lwIP host tests' fixtures share (lwip_http_test.cpp: the listener
// and the engine; lwip_tls_test.cpp: the TLS layer between them): running the world until a
// condition holds, letting every connection end, and the checks at each test's end (every
// connection gone, lwIP's pools back to what they held after listen(), then, once the
// listener stopped, to what they held right after lwip_init()).
//
// A fixture says what one step is (step_once: the world, and the listener's run_once), when
// every connection is gone (released) and how its listener stops (stop_listener), sets
// listening_ right after listen(), and has set_up()/tear_down() for SetUp()/TearDown(). The
// heap is closed from SetUp() to TearDown() but where a test opens it: the fixture's members
// (server, engine, listener) are built and destroyed inside a NoHeapScope too.
#ifndef EMCP_TESTS_LWIP_FIXTURE_H
#define EMCP_TESTS_LWIP_FIXTURE_H

#include <gtest/gtest.h>

#include <optional>

#include "../unit/heap_guard.h"
#include "lwip_world.h"

namespace lwip_fixture {

class LwipFixture : public ::testing::Test {
 private:
  // A member of the base: open while the fixture's own members are built and destroyed.
  std::optional<emcp_test::NoHeapScope> lifetime_scope_{std::in_place};

 protected:
  void SetUp() final {
    lifetime_scope_.reset();
    set_up();
  }
  void TearDown() final {
    tear_down();
    lifetime_scope_.emplace();
  }
  virtual void set_up() = 0;
  virtual void tear_down() = 0;

  /// One step of the world and the listener.
  virtual void step_once() = 0;
  /// Every connection is gone (the engine's and the listener's slots).
  virtual bool released() = 0;
  virtual void stop_listener() = 0;

  /// A set_up's start: lwIP started (once per process), the clock's step 2 ms, no hook, every
  /// client fresh.
  static void fresh_world(lwip_world::AssertFn on_assert) {
    lwip_world::init(on_assert);
    emcp_test::NoHeapScope no_heap;
    lwip_world::set_tick(2);
    lwip_world::set_hook(nullptr, nullptr);
    for (size_t i = 0; i < lwip_world::kClients; ++i) lwip_world::client(i).reset();
  }

  /// Runs step_once() until `done` or `max_steps`.
  template <class Done>
  bool run_until(Done done, int max_steps = 20000) {
    emcp_test::NoHeapScope no_heap;
    for (int i = 0; i < max_steps; ++i) {
      if (done()) return true;
      step_once();
    }
    return done();
  }
  void run_steps(int n) {
    run_until([] { return false; }, n);
  }

  /// Until every connection is gone and lwIP's pools are as they were after listen(), in steps
  /// of 250 ms: lwIP's timers (retransmissions, TIME_WAIT) and the engine's timeouts run.
  void settle() {
    const uint32_t tick = lwip_world::tick();
    lwip_world::set_tick(250);
    run_until([&] { return released() && lwip_world::same(lwip_world::pools(), listening_, nullptr, 0); }, 4000);
    lwip_world::set_tick(tick);
  }

  /// A TearDown's checks, once its clients are gone: settle(), then every connection is gone
  /// and lwIP's pools are as after listen(); the listener stops and they are as at start.
  void expect_released_then_stop() {
    settle();
    EXPECT_TRUE(released()) << "connections left after the test";
    char why[512];
    EXPECT_TRUE(lwip_world::same(lwip_world::pools(), listening_, why, sizeof why)) << "pools after the test: " << why;
    {
      emcp_test::NoHeapScope no_heap;
      stop_listener();
      lwip_world::set_tick(250);
      for (int i = 0; i < 8; ++i) lwip_world::step();  // lwIP's TCP timer stops once idle
    }
    EXPECT_TRUE(lwip_world::same(lwip_world::pools(), lwip_world::at_start(), why, sizeof why))
        << "pools after stop(): " << why;
  }

  /// A TearDown for a fixture with nothing more to let go of: the hook, held memory and pcbs,
  /// every client and what lwIP holds of closed ones (the clients' machines gone), then
  /// expect_released_then_stop().
  void release_all_then_stop(uint16_t server_port) {
    {
      emcp_test::NoHeapScope no_heap;
      lwip_world::set_hook(nullptr, nullptr);
      lwip_world::release_held();
      lwip_world::abort_clients();
      (void)lwip_world::abort_strays(server_port);
    }
    expect_released_then_stop();
  }

  lwip_world::Pools listening_{};
};

}  // namespace lwip_fixture

#endif  // EMCP_TESTS_LWIP_FIXTURE_H
