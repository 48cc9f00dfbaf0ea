"""Failing outputs of real test runners, as they print them, with what a failure must keep.

Each :class:`RunnerFailure` holds a runner's output for one failing test, the command that ran
it, its exit code, the *chosen error line* (the line that says what went wrong) and the summary
lines the runner printed (its tallies and the failures it names), in output order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunnerFailure:
    runner: str
    command: str
    output: str
    exit_code: int
    error: str | None
    """The chosen error line (None: the runner prints none that an error rule can tell)."""
    summary: tuple[str, ...]


RUNNERS: tuple[RunnerFailure, ...] = (
    RunnerFailure(
        "pytest",
        "pytest tests/",
        """============================= test session starts ==============================
platform linux -- Python 3.12.1, pytest-8.0.0, pluggy-1.4.0
rootdir: /w/calc
collected 13 items

tests/test_calc.py .F...........                                         [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 4
E       assert 3 == 4
E        +  where 3 = add(1, 2)

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 3 == 4
========================= 1 failed, 12 passed in 0.52s =========================""",
        1,
        "tests/test_calc.py:5: AssertionError",
        (
            "FAILED tests/test_calc.py::test_add - assert 3 == 4",
            "========================= 1 failed, 12 passed in 0.52s =========================",
        ),
    ),
    RunnerFailure(
        "pytest -q",
        "python -m pytest -q",
        """.F.
================================== FAILURES ===================================
__________________________________ test_sub ___________________________________

    def test_sub():
>       assert sub(3, 1) == 1
E       assert 2 == 1

tests/test_calc.py:9: AssertionError
=========================== short test summary info ===========================
FAILED tests/test_calc.py::test_sub - assert 2 == 1
1 failed, 2 passed in 0.04s""",
        1,
        "E       assert 2 == 1",
        ("FAILED tests/test_calc.py::test_sub - assert 2 == 1", "1 failed, 2 passed in 0.04s"),
    ),
    RunnerFailure(
        "pytest collection error",
        "pytest",
        """==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_db.py ______________________
ImportError while importing test module '/w/tests/test_db.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
tests/test_db.py:1: in <module>
    import psycopg
E   ModuleNotFoundError: No module named 'psycopg'
=========================== short test summary info ============================
ERROR tests/test_db.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.12s ===============================""",
        2,
        "E   ModuleNotFoundError: No module named 'psycopg'",
        (
            "ERROR tests/test_db.py",
            "=============================== 1 error in 0.12s ===============================",
        ),
    ),
    RunnerFailure(
        "unittest",
        "python -m unittest",
        """F.
======================================================================
FAIL: test_add (tests.test_calc.CalcTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/tests/test_calc.py", line 6, in test_add
    self.assertEqual(add(1, 2), 4)
AssertionError: 3 != 4

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=1)""",
        1,
        "AssertionError: 3 != 4",
        ("FAIL: test_add (tests.test_calc.CalcTest.test_add)", "FAILED (failures=1)"),
    ),
    RunnerFailure(
        "cargo test",
        "cargo test",
        """   Compiling calc v0.1.0 (/w/calc)
    Finished test [unoptimized + debuginfo] target(s) in 0.52s
     Running unittests src/lib.rs (target/debug/deps/calc-1a2b3c)

running 4 tests
test tests::adds ... FAILED
test tests::subs ... ok
test tests::muls ... ok
test tests::divs ... ok

failures:

---- tests::adds stdout ----
thread 'tests::adds' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: 3
 right: 4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::adds

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`""",
        101,
        "thread 'tests::adds' panicked at src/lib.rs:12:9:",
        (
            "test tests::adds ... FAILED",
            "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
            "finished in 0.00s",
        ),
    ),
    RunnerFailure(
        "go test",
        "go test ./...",
        """=== RUN   TestAdd
    calc_test.go:9: Add(1, 2) = 3, want 4
--- FAIL: TestAdd (0.00s)
=== RUN   TestSub
--- PASS: TestSub (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
ok  \texample.com/calc/internal\t0.001s
FAIL""",
        1,
        "calc_test.go:9: Add(1, 2) = 3, want 4",
        ("--- FAIL: TestAdd (0.00s)", "FAIL\texample.com/calc\t0.002s"),
    ),
    RunnerFailure(
        "jest",
        "npx jest",
        """FAIL src/sum.test.js
  sum
    ✓ adds 1 + 1 (2 ms)
    ✕ adds 1 + 2 to equal 4 (3 ms)

  ● sum › adds 1 + 2 to equal 4

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

      3 | test('adds 1 + 2 to equal 4', () => {
    > 4 |   expect(sum(1, 2)).toBe(4);
        |                     ^
      5 | });

      at Object.toBe (src/sum.test.js:4:21)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 3 passed, 4 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.""",
        1,
        "● sum › adds 1 + 2 to equal 4",
        (
            "FAIL src/sum.test.js",
            "Test Suites: 1 failed, 1 total",
            "Tests:       1 failed, 3 passed, 4 total",
        ),
    ),
    RunnerFailure(
        "vitest",
        "npx vitest run",
        """ ❯ src/sum.test.ts (4 tests | 1 failed) 5ms
   × sum > adds 1 + 2 5ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/sum.test.ts > sum > adds 1 + 2
AssertionError: expected 3 to be 4 // Object.is equality
 ❯ src/sum.test.ts:5:22

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed (1)
      Tests  1 failed | 3 passed (4)
   Start at  10:00:00
   Duration  312ms (transform 20ms, setup 0ms, collect 15ms, tests 5ms)""",
        1,
        "AssertionError: expected 3 to be 4 // Object.is equality",
        (
            "FAIL  src/sum.test.ts > sum > adds 1 + 2",
            "Test Files  1 failed (1)",
            "Tests  1 failed | 3 passed (4)",
        ),
    ),
    RunnerFailure(
        "mocha",
        "npx mocha",
        """

  Calculator
    1) adds
    ✔ subtracts


  1 passing (5ms)
  1 failing

  1) Calculator
       adds:

      AssertionError [ERR_ASSERTION]: 3 == 4
      + expected - actual

      -3
      +4

      at Context.<anonymous> (test/calc.test.js:6:12)
""",
        1,
        "AssertionError [ERR_ASSERTION]: 3 == 4",
        ("1 failing",),
    ),
    RunnerFailure(
        "node --test",
        "node --test",
        """✔ subtracts (0.4ms)
✖ adds (1.2ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

  3 !== 4

      at TestContext.<anonymous> (file:///w/test/calc.test.js:6:10)
ℹ tests 2
ℹ suites 0
ℹ pass 1
ℹ fail 1
ℹ cancelled 0
ℹ skipped 0
ℹ todo 0
ℹ duration_ms 45.1""",
        1,
        "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        ("ℹ fail 1",),
    ),
    RunnerFailure(
        "rspec",
        "bundle exec rspec",
        """..F

Failures:

  1) Calculator adds two numbers
     Failure/Error: expect(Calculator.new.add(1, 2)).to eq(4)

       expected: 4
            got: 3

       (compared using ==)
     # ./spec/calculator_spec.rb:5:in `block (2 levels) in <top (required)>'

Finished in 0.01234 seconds (files took 0.1 seconds to load)
5 examples, 1 failure

Failed examples:

rspec ./spec/calculator_spec.rb:4 # Calculator adds two numbers""",
        1,
        "Failure/Error: expect(Calculator.new.add(1, 2)).to eq(4)",
        (
            "5 examples, 1 failure",
            "rspec ./spec/calculator_spec.rb:4 # Calculator adds two numbers",
        ),
    ),
    RunnerFailure(
        "minitest",
        "bundle exec rake test",
        """Run options: --seed 1234

# Running:

F.

Finished in 0.001s, 2000.0 runs/s, 2000.0 assertions/s.

  1) Failure:
CalculatorTest#test_add [test/calculator_test.rb:6]:
Expected: 4
  Actual: 3

2 runs, 2 assertions, 1 failures, 0 errors, 0 skips""",
        1,
        None,
        (
            "CalculatorTest#test_add [test/calculator_test.rb:6]:",
            "2 runs, 2 assertions, 1 failures, 0 errors, 0 skips",
        ),
    ),
    RunnerFailure(
        "exunit",
        "mix test",
        """..

  1) test adds (CalcTest)
     test/calc_test.exs:5
     Assertion with == failed
     code:  assert Calc.add(1, 2) == 4
     left:  3
     right: 4
     stacktrace:
       test/calc_test.exs:6: (test)


Finished in 0.02 seconds (0.01s async, 0.01s sync)
13 tests, 1 failure""",
        2,
        "Assertion with == failed",
        ("13 tests, 1 failure",),
    ),
    RunnerFailure(
        "bats",
        "bats test/",
        """1..3
ok 1 adds
not ok 2 subtracts
# (in test file test/calc.bats, line 9)
#   `[ "$result" -eq 1 ]' failed
ok 3 multiplies

3 tests, 1 failure""",
        1,
        """#   `[ "$result" -eq 1 ]' failed""",
        ("not ok 2 subtracts", "3 tests, 1 failure"),
    ),
    RunnerFailure(
        "phpunit",
        "vendor/bin/phpunit",
        """PHPUnit 10.5.0 by Sebastian Bergmann and contributors.

F.                                                                  2 / 2 (100%)

Time: 00:00.010, Memory: 8.00 MB

There was 1 failure:

1) Tests\\CalculatorTest::testAdd
Failed asserting that 3 matches expected 4.

/w/tests/CalculatorTest.php:9

FAILURES!
Tests: 2, Assertions: 2, Failures: 1.""",
        1,
        "Failed asserting that 3 matches expected 4.",
        ("There was 1 failure:", "Tests: 2, Assertions: 2, Failures: 1."),
    ),
    RunnerFailure(
        "maven surefire",
        "mvn -q test",
        """[INFO] Running com.acme.CalculatorTest
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in com.acme.CalculatorTest
[ERROR] com.acme.CalculatorTest.testAdd -- Time elapsed: 0.01 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <4> but was: <3>
\tat com.acme.CalculatorTest.testAdd(CalculatorTest.java:12)

[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   CalculatorTest.testAdd:12 expected: <4> but was: <3>
[INFO]
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
[INFO]
[INFO] BUILD FAILURE""",
        1,
        "org.opentest4j.AssertionFailedError: expected: <4> but was: <3>",
        (
            "[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s "
            "<<< FAILURE! -- in com.acme.CalculatorTest",
            "[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0",
        ),
    ),
    RunnerFailure(
        "gradle",
        "./gradlew test",
        """> Task :test FAILED

CalculatorTest > adds() FAILED
    org.opentest4j.AssertionFailedError at CalculatorTest.java:12

2 tests completed, 1 failed

FAILURE: Build failed with an exception.""",
        1,
        "FAILURE: Build failed with an exception.",
        ("CalculatorTest > adds() FAILED", "2 tests completed, 1 failed"),
    ),
    RunnerFailure(
        "dotnet test",
        "dotnet test",
        """  Failed Calc.Tests.AddTest [5 ms]
  Error Message:
   Assert.Equal() Failure: Values differ
Expected: 4
Actual:   3
  Stack Trace:
     at Calc.Tests.AddTest() in /w/CalcTests.cs:line 12

Failed!  - Failed:     1, Passed:     1, Skipped:     0, Total:     2, Duration: 5 ms - Calc.Tests.dll (net8.0)""",
        1,
        "Assert.Equal() Failure: Values differ",
        (
            "Failed Calc.Tests.AddTest [5 ms]",
            "Failed!  - Failed:     1, Passed:     1, Skipped:     0, Total:     2, Duration: 5 ms "
            "- Calc.Tests.dll (net8.0)",
        ),
    ),
    RunnerFailure(
        "ctest",
        "ctest --output-on-failure",
        """    Start 1: test_add
1/2 Test #1: test_add .........................***Failed    0.01 sec
/w/tests/test_add.c:7: assertion failed: add(1, 2) == 4
    Start 2: test_sub
2/2 Test #2: test_sub .........................   Passed    0.01 sec

50% tests passed, 1 tests failed out of 2

Total Test time (real) =   0.02 sec

The following tests FAILED:
\t  1 - test_add (Failed)
Errors while running CTest""",
        8,
        "Errors while running CTest",
        (
            "1/2 Test #1: test_add .........................***Failed    0.01 sec",
            "50% tests passed, 1 tests failed out of 2",
        ),
    ),
    RunnerFailure(
        "swift test",
        "swift test",
        """Test Suite 'All tests' started at 2024-01-01 10:00:00.000.
Test Case '-[CalcTests.CalcTests testAdd]' started.
/w/Tests/CalcTests/CalcTests.swift:6: error: -[CalcTests.CalcTests testAdd] : XCTAssertEqual failed: ("3") is not equal to ("4")
Test Case '-[CalcTests.CalcTests testAdd]' failed (0.001 seconds).
Test Suite 'All tests' failed at 2024-01-01 10:00:00.002.
\t Executed 2 tests, with 1 failure (0 unexpected) in 0.002 (0.003) seconds""",
        1,
        "/w/Tests/CalcTests/CalcTests.swift:6: error: -[CalcTests.CalcTests testAdd] : "
        'XCTAssertEqual failed: ("3") is not equal to ("4")',
        (
            "Test Case '-[CalcTests.CalcTests testAdd]' failed (0.001 seconds).",
            "Executed 2 tests, with 1 failure (0 unexpected) in 0.002 (0.003) seconds",
        ),
    ),
)
