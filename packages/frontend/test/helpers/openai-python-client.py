"""Calls Tritium's OpenAI frontend with OpenAI's own Python client, unmodified, and prints what
it got as one JSON object. Usage: openai-python-client.py <base URL>"""
import json
import sys

import openai

client = openai.OpenAI(base_url=sys.argv[1], api_key="unused", max_retries=0)
result = {}

completion = client.completions.create(model="words", prompt="one two three", max_tokens=5)
result["completion"] = {"text": completion.choices[0].text, "finish_reason": completion.choices[0].finish_reason, "usage": completion.usage.model_dump()}

stream = client.chat.completions.create(
    model="words", messages=[{"role": "user", "content": "hello there"}], max_tokens=4, stream=True, stream_options={"include_usage": True}
)
deltas, finish_reasons, usage = [], [], None
for chunk in stream:
    for choice in chunk.choices:
        deltas.append(choice.delta.content or "")
        if choice.finish_reason:
            finish_reasons.append(choice.finish_reason)
    if chunk.usage:
        usage = chunk.usage.model_dump()
result["chat_stream"] = {"content": "".join(deltas), "finish_reasons": finish_reasons, "usage": usage}

chat = client.chat.completions.create(model="words", messages=[{"role": "user", "content": "hi"}], max_completion_tokens=2, n=2)
result["chat"] = [choice.message.content for choice in chat.choices]

embeddings = client.embeddings.create(model="vectors", input=["one two", "three"], encoding_format="float")
result["embeddings"] = [item.embedding for item in embeddings.data]

try:
    client.completions.create(model="nope", prompt="a")
except openai.NotFoundError as error:
    result["not_found"] = {"status": error.status_code, "code": error.code, "param": error.param}

try:
    client.completions.create(model="words", prompt="a", temperature=5)
except openai.BadRequestError as error:
    result["bad_request"] = {"status": error.status_code, "param": error.param, "type": error.type}

print(json.dumps(result))
