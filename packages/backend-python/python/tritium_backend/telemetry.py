"""Log lines and metric frames for the server."""


class Telemetry:
    """pb_utils.Logger and the metrics send through these."""

    def log(self, level, message):
        self.send({"t": "log", "level": level, "message": message})

    def metric(self, frame):
        self.send(frame)
