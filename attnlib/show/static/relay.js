// Relay: applies one explorer change — the updates of several widgets — from one message.
//
// The kernel (attnlib/show/relay.py) sends {kind: "update", updates: [{id, state}, ...],
// buffer_paths} with the binary buffers (a view's matrix) as the message's buffers. Each update is
// applied to its widget's model as ipywidgets applies a widget's own "update" message: buffers put
// back, the state deserialised by the model's class, then set_state (which sends nothing back), in
// order with that model's other messages. All of it runs in one task, so every view redraws in the
// same frame.
// Handshake: "hello" (this page runs the relay) → the kernel sends {kind: "route", ids} → the
// models are looked up once and confirmed with {kind: "routed", ids}; until then the kernel sends
// each widget's own messages.

function putBuffers(message, paths, buffers) {
  paths.forEach((path, k) => {
    let node = message;
    for (const key of path.slice(0, -1)) node = node[key];
    const buffer = buffers[k];
    node[path[path.length - 1]] = buffer instanceof ArrayBuffer ? new DataView(buffer) : buffer;
  });
}

// a model this file can update as ipywidgets does; any other (a front end with another widget
// manager) is not confirmed, so the kernel keeps sending that widget its own messages
function updatable(target) {
  return Boolean(target) && typeof target.set_state === "function" && typeof target.state_change?.then === "function" &&
    typeof target.constructor?._deserialize_state === "function";
}

function initialize({ model }) {
  const manager = model.widget_manager;
  const models = new Map();  // model id → the widget's model, looked up once

  function apply(target, state) {
    target.state_change = target.state_change
      .then(() => target.constructor._deserialize_state(state, target.widget_manager))
      .then((deserialised) => target.set_state(deserialised))
      .catch((error) => console.error("attnlib relay: could not apply an update", error));
  }

  model.on("msg:custom", (message, buffers) => {
    if (message.kind === "route") {
      Promise.all(message.ids.map((id) => manager.get_model(id).catch(() => null))).then((found) => {
        const ids = [];
        message.ids.forEach((id, k) => {
          if (updatable(found[k])) {
            models.set(id, found[k]);
            ids.push(id);
          }
        });
        model.send({ kind: "routed", ids });
      });
    } else if (message.kind === "update") {
      putBuffers(message, message.buffer_paths || [], buffers || []);
      for (const { id, state } of message.updates) {
        const target = models.get(id);
        if (target) apply(target, state);
        else {
          manager.get_model(id).then(
            (found) => {
              if (!updatable(found)) return;
              models.set(id, found);
              apply(found, state);
            },
            () => {},  // a widget closed in the meantime: nothing to update
          );
        }
      }
    }
  });
  model.send({ kind: "hello" });
}

export default { initialize };
