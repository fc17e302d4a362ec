#!/usr/bin/env python3
"""A minimal OTLP/HTTP receiver for measuring export's cost (docs/performance.md): it takes
every POST to /v1/traces, answers 200 with an empty ExportTraceServiceResponse, and keeps
nothing. Standard library only.

Usage: otlp-sink.py PORT
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
