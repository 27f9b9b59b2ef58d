"""pb_utils.Logger: log lines that go to the server's log."""

import enum as _enum
import sys as _sys

from .. import connection as _connection
from .errors import TritonModelException


class LogLevel(_enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3


_LEVEL_WIRE = {LogLevel.INFO: "INFO", LogLevel.WARNING: "WARNING",
               LogLevel.ERROR: "ERROR", LogLevel.VERBOSE: "VERBOSE"}


class Logger:
    """pb_utils.Logger: log_info/log_warn/log_error/log_verbose(msg) and
    log(msg, level=Logger.INFO). Messages go to the server's log."""

    LogLevel = LogLevel
    INFO = LogLevel.INFO
    WARNING = LogLevel.WARNING
    ERROR = LogLevel.ERROR
    VERBOSE = LogLevel.VERBOSE

    @staticmethod
    def log(message, level=LogLevel.INFO):
        try:
            wire = _LEVEL_WIRE[LogLevel(level)]
        except ValueError:
            raise TritonModelException("unknown log level %r" % (level,)) from None
        s = _connection.current()
        if s is None:
            print("[%s] %s" % (wire, message), file=_sys.stderr)
        else:
            s.log(wire, str(message))

    @staticmethod
    def log_info(message):
        Logger.log(message, LogLevel.INFO)

    @staticmethod
    def log_warn(message):
        Logger.log(message, LogLevel.WARNING)

    @staticmethod
    def log_error(message):
        Logger.log(message, LogLevel.ERROR)

    @staticmethod
    def log_verbose(message):
        Logger.log(message, LogLevel.VERBOSE)
