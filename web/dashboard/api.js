// api.js - the page's one way to the API: GETs with the token when there is one. A 401 opens the
// token dialog; the request is repeated with what the user typed, which stays in this tab's
// sessionStorage only. Errors come back as Error objects carrying the API's error message.
"use strict";
var PL = window.PL || (window.PL = {});

PL.api = (function () {
  var KEY = "perflog.token";
  var asking = null; // the promise of the open token dialog, shared by every waiting request

  function token() {
    try {
      return sessionStorage.getItem(KEY) || "";
    } catch (e) {
      return "";
    }
  }

  function headers() {
    var t = token();
    return t ? { Authorization: "Bearer " + t } : {};
  }

  // Show the dialog once for all the requests that got a 401; resolves when a token is entered.
  function askToken(why) {
    if (asking) return asking;
    asking = new Promise(function (resolve) {
      var dlg = document.getElementById("token-dialog");
      var form = document.getElementById("token-form");
      var input = document.getElementById("token-input");
      document.getElementById("token-why").textContent = why;
      function done(ev) {
        ev.preventDefault();
        if (!input.value) return;
        try {
          sessionStorage.setItem(KEY, input.value);
        } catch (e) {
          // private mode without storage: the token lives until the page is closed
        }
        input.value = "";
        form.removeEventListener("submit", done);
        dlg.close();
        asking = null;
        resolve();
      }
      form.addEventListener("submit", done);
      if (!dlg.open) dlg.showModal();
      input.focus();
    });
    return asking;
  }

  async function errorOf(r) {
    var msg = r.status + " " + r.statusText;
    try {
      var j = await r.json();
      if (j && j.error) msg = j.error.message + " (" + j.error.code + ")";
    } catch (e) {
      // not JSON: keep the status line
    }
    var err = new Error(msg);
    err.status = r.status;
    return err;
  }

  // fetch() with the token; a 401 asks for one and tries again. Resolves with the Response.
  async function request(path) {
    for (;;) {
      var r = await fetch(path, { headers: headers(), cache: "no-store" });
      if (r.status !== 401) {
        if (!r.ok) throw await errorOf(r);
        return r;
      }
      await askToken(token()
        ? "The token was refused (wrong token). Enter the auth_token of perflogd's configuration."
        : "Reading needs the auth_token of perflogd's configuration.");
    }
  }

  async function json(path) {
    return (await request(path)).json();
  }

  // Save what `path` answers as a file: through fetch, so the token goes along (a plain link
  // could not send it).
  async function download(path, fallbackName) {
    var r = await request(path);
    var name = fallbackName;
    var cd = r.headers.get("Content-Disposition") || "";
    var m = /filename="?([^";]+)"?/.exec(cd);
    if (m) name = m[1];
    var url = URL.createObjectURL(await r.blob());
    var a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
    return name;
  }

  function qs(params) {
    return params.map(function (p) {
      return encodeURIComponent(p[0]) + "=" + encodeURIComponent(p[1]);
    }).join("&");
  }

  return { json: json, download: download, qs: qs, token: token };
})();
