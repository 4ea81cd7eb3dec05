"""The tests, one folder per part of the package (``tests/search`` tests ``puzzlezero/search``, ...);
``tests/benchmarks`` and ``tests/experiments`` test the scripts of the checkout's folders of those
names, each loaded from its file (``tests.conftest.load_script``).

Every folder is a package, so each test module has one dotted name from the checkout's root
(``tests.search.test_beam``): two folders may hold files of the same name, and the shared helpers
are imported by that name from anywhere (``from tests.clock import FakeClock``,
``from tests.conftest import tiny_train_config``). pytest's default ``prepend`` import mode puts
the checkout's root on ``sys.path`` for this, and worker processes started by ``spawn`` inherit
it, so they import the picklable fakes of ``tests.web.web_fakes`` by the same name. Helpers are
never imported by a bare name (``from clock import ...``): that would load a second copy of the
module beside pytest's own."""
