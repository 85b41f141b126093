#include "etwh/wake_floor.h"

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <iterator>
#include <set>

namespace {

using namespace std::chrono_literals;

cpu_set_t current_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  return mask;
}

// The placements are what make the floor's two values separate figures (wake_floor.h): a
// sample woken on the wrong CPU would mix them again.
TEST(WakeFloor, SameCpuWakesTheSleeperOnTheWakersCpuAndGivesTheMaskBack) {
  const cpu_set_t before = current_mask();
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(50, 20us, etwh::WakePlacement::kSameCpu);
  ASSERT_EQ(s.ns.size(), 50u);
  ASSERT_EQ(s.sleeper_cpus.size(), 50u);
  ASSERT_GE(s.waker_cpu, 0);
  for (const int cpu : s.sleeper_cpus) EXPECT_EQ(cpu, s.waker_cpu);
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(WakeFloor, OtherCpuWakesTheSleeperElsewhereAndGivesTheMaskBack) {
  const cpu_set_t before = current_mask();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "this thread may use a single CPU";
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(50, 20us, etwh::WakePlacement::kOtherCpu);
  ASSERT_EQ(s.ns.size(), 50u);
  ASSERT_GE(s.waker_cpu, 0);
  const std::set<int> cpus(s.sleeper_cpus.begin(), s.sleeper_cpus.end());
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_NE(*cpus.begin(), s.waker_cpu);
  EXPECT_TRUE(CPU_ISSET(*cpus.begin(), &before));
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(WakeFloor, OtherCpuOnASingleCpuIsNoSamplesNotAnError) {
  const cpu_set_t before = current_mask();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(::sched_getcpu(), &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(10, 20us, etwh::WakePlacement::kOtherCpu);
  const cpu_set_t after = current_mask();
  ASSERT_EQ(::sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_TRUE(s.ns.empty());
  EXPECT_EQ(s.unavailable, "this thread may use a single CPU");
  EXPECT_EQ(s.waker_cpu, -1);
  EXPECT_TRUE(CPU_EQUAL(&one, &after));
}

// Makes sched_setaffinity fail with EPERM in this process, as a sandbox's policy may.
bool refuse_pinning() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Where threads cannot be pinned, a pinned placement is a floor that cannot be had, said why,
// not an error (etwh stress would make every run a harness error of it).
TEST(WakeFloor, APlacementTheKernelRefusesIsNoSamplesSaidWhy) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!refuse_pinning()) ::_exit(2);
    try {
      const etwh::WakeSamples s =
          etwh::measure_futex_wake_floor(10, 20us, etwh::WakePlacement::kSameCpu);
      const bool said = s.unavailable.find("refused to pin") != std::string::npos;
      ::_exit(s.ns.empty() && said ? 0 : 1);
    } catch (...) {
      ::_exit(3);  // an error, not a placement that cannot be had
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 2) << "could not install the seccomp filter";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "with pinning refused: 1, samples or no reason given; 3, an exception";
}

TEST(WakeFloor, AnyCpuPinsNothing) {
  const etwh::WakeSamples s = etwh::measure_futex_wake_floor(20, 20us);
  EXPECT_EQ(s.ns.size(), 20u);
  EXPECT_EQ(s.waker_cpu, -1);
  for (const auto ns : s.ns) EXPECT_GT(ns, 0u);
  EXPECT_TRUE(s.unavailable.empty());
}

// The kernel never ends a timed wait early, so every nap lasts at least what was asked: a
// sample under it would be a measurement of something else (a wake-up, a signal).
TEST(WakeFloor, EveryNapLastsAtLeastWhatWasAsked) {
  for (const auto nap : {25'000ns, 1'000'000ns}) {
    const std::vector<std::uint64_t> ns = etwh::measure_futex_nap(20, nap);
    ASSERT_EQ(ns.size(), 20u);
    for (const auto slept : ns) EXPECT_GE(slept, static_cast<std::uint64_t>(nap.count()));
  }
}

}  // namespace
