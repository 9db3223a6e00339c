// The payout widget's script: screens, validation while typing, calls to the widget routes,
// and the messages to the host page (parent frame or opener). It never sees a secret: the
// payload and signature are the link's own, read from the address bar.
(function () {
  "use strict";
  var state = JSON.parse(document.getElementById("widget-state").textContent);
  var params = new URLSearchParams(window.location.search);
  var link = { payload: params.get("payload") || "", signature: params.get("signature") || "" };
  var host = window.parent !== window ? window.parent : window.opener;
  var FINAL = { COMPLETED: 1, FAILED: 1, CANCELED: 1, EXPIRED: 1 };
  var FAILED = { FAILED: 1, CANCELED: 1, EXPIRED: 1 };
  var $ = function (id) { return document.getElementById(id); };

  function hostOrigin() {
    var ancestors = window.location.ancestorOrigins;
    if (window.parent !== window && ancestors && ancestors.length) return ancestors[0];
    try { if (document.referrer) return new URL(document.referrer).origin; } catch (e) { /* none */ }
    return "*";
  }
  var targetOrigin = hostOrigin();

  function post(type, data) {
    if (!host) return;
    host.postMessage({ source: "payout-widget", type: type, data: data || {} }, targetOrigin);
  }

  var lastHeight = 0;
  function reportHeight() {
    var height = Math.ceil($("widget").getBoundingClientRect().height);
    if (height !== lastHeight) { lastHeight = height; post("resize", { height: height }); }
  }

  function rubles(text) {
    var parts = String(text).split(".");
    var whole = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, "\u00a0");
    return whole + "," + (parts[1] || "00") + "\u00a0₽";
  }

  function show(screen) {
    ["error", "form", "confirm", "status"].forEach(function (name) {
      $("screen-" + name).hidden = name !== screen;
    });
    $("amount").hidden = screen === "error";
    requestAnimationFrame(reportHeight);
  }

  // -- rules, the same as the sandbox checks on save --------------------------------------
  var banks = {};
  (state.banks || []).forEach(function (b) { banks[b.bik] = b.name; });
  var NAME = /^[А-ЯЁа-яё]+(?:-[А-ЯЁа-яё]+)*(?: [А-ЯЁа-яё]+(?:-[А-ЯЁа-яё]+)*)+$/;

  function keyMatches(bik, account) {
    var digits = bik.slice(-3) + account, weights = [7, 1, 3], total = 0;
    for (var i = 0; i < digits.length; i++) total += Number(digits[i]) * weights[i % 3];
    return total % 10 === 0;
  }

  function age(born) {
    var today = new Date();
    var years = today.getFullYear() - born.getFullYear();
    var m = today.getMonth() - born.getMonth();
    if (m < 0 || (m === 0 && today.getDate() < born.getDate())) years -= 1;
    return years;
  }

  var rules = {
    fullName: function (v) {
      v = v.trim().split(/\s+/).join(" ");
      return NAME.test(v) ? "" : "Укажите фамилию и имя кириллицей";
    },
    phone: function (v) {
      return /^\+7\d{10}$/.test(v.replace(/[\s()-]/g, "")) ? "" : "Телефон в формате +7XXXXXXXXXX";
    },
    bik: function (v) {
      v = v.trim();
      return /^\d{9}$/.test(v) && banks[v] ? "" : "Выберите банк из списка (БИК из 9 цифр)";
    },
    account: function (v) {
      v = v.replace(/\s/g, "");
      if (!/^\d{20}$/.test(v)) return "Номер счёта — 20 цифр";
      if (!/^408(17|20)810\d{12}$/.test(v)) return "Нужен рублёвый счёт физического лица (40817810… или 40820810…)";
      var bik = $("bik").value.trim();
      if (!rules.bik(bik) && !keyMatches(bik, v)) return "Номер счёта не соответствует БИК банка";
      return "";
    },
    birthDate: function (v) {
      v = v.trim();
      if (!v) return "";
      var m = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(v);
      var born = m && new Date(Number(m[3]), Number(m[2]) - 1, Number(m[1]));
      if (!born || born.getDate() !== Number(m[1]) || born.getMonth() !== Number(m[2]) - 1) return "Дата в формате ДД.ММ.ГГГГ";
      var years = age(born);
      return years >= 14 && years <= 120 ? "" : "Возраст получателя — от 14 до 120 лет";
    }
  };
  var FIELDS = Object.keys(rules);
  var touched = {};

  function showFieldError(name, message) {
    var input = $(name);
    $(name + "-error").textContent = message;
    input.setAttribute("aria-invalid", message ? "true" : "false");
    input.classList.toggle("valid", !message && input.value.trim() !== "");
    if (name === "bik") $("bik-bank").textContent = message ? "" : (banks[input.value.trim()] || "");
  }

  function checkField(name, force) {
    var message = rules[name]($(name).value);
    // While typing, a field shows its error once it was left or complete; a fix shows at once.
    if (force || touched[name] || !message) showFieldError(name, message);
    return !message;
  }

  function checkAll() {
    var firstBad = null;
    FIELDS.forEach(function (name) {
      touched[name] = true;
      if (!checkField(name, true) && !firstBad) firstBad = name;
    });
    reportHeight();
    return firstBad;
  }

  function values() {
    var result = {};
    FIELDS.forEach(function (name) { result[name] = $(name).value; });
    return result;
  }

  // -- calls to the widget routes --------------------------------------------------------
  function call(method, path, body) {
    var options = { method: method, headers: { "Content-Type": "application/json" }, credentials: "omit" };
    var url = "/payout-widget/" + path;
    if (method === "GET") url += "?" + new URLSearchParams(link).toString();
    else options.body = JSON.stringify(Object.assign({}, link, body || {}));
    return fetch(url, options).then(function (response) {
      return response.json().then(function (data) { return { status: response.status, data: data }; });
    });
  }

  function linkError(data) {
    var error = data && data.error;
    if (error && /^(PAYLOAD_INVALID|SIGNATURE_INVALID|LINK_EXPIRED|UNAVAILABLE)$/.test(error.code)) {
      showError(error);
      return true;
    }
    return false;
  }

  var ERROR_TEXT = {
    PAYLOAD_INVALID: ["Ссылка повреждена", "Ссылка составлена с ошибкой. Обратитесь к отправителю выплаты."],
    SIGNATURE_INVALID: ["Ссылка недействительна", "Ссылка не прошла проверку подлинности. Обратитесь к отправителю выплаты."],
    LINK_EXPIRED: ["Срок действия ссылки истёк", "Попросите у отправителя выплаты новую ссылку."],
    UNAVAILABLE: ["Сервис временно недоступен", "Попробуйте открыть ссылку позже."]
  };

  function showError(error) {
    var text = ERROR_TEXT[error.code] || ERROR_TEXT.UNAVAILABLE;
    $("error-title").textContent = text[0];
    $("error-text").textContent = text[1];
    $("error-code").textContent = "Код ошибки: " + error.code + (error.detail ? " (" + error.detail + ")" : "");
    show("error");
    post("error", error);
  }

  function unavailable() {
    showError({ code: "UNAVAILABLE" });
  }

  // -- screens ---------------------------------------------------------------------------
  var editing = false;

  function showForm(replacing) {
    editing = replacing;
    $("form-intro").textContent = replacing
      ? "Укажите новые реквизиты. Они заменят сохранённые."
      : "Укажите счёт, на который придут деньги. Реквизиты сохранятся для следующих выплат.";
    $("save").textContent = replacing ? "Сохранить реквизиты" : "Получить выплату";
    $("cancel-edit").hidden = !replacing;
    $("form-error").textContent = "";
    show("form");
  }

  function showAccount(account) {
    state.account = account;
    $("account-bank").textContent = account.bankName;
    $("account-last4").textContent = account.last4;
    $("account-name").textContent = account.fullName;
    $("bank-logo").textContent = (account.bankName || "Б").replace(/^Банк\s+/, "").charAt(0);
    $("confirm-error").textContent = "";
    show("confirm");
  }

  var STATUS = {
    CREATED: ["wait", "…", "Выплата принята", "Деньги поступят на счёт обычно в течение нескольких минут."],
    PROCESSING: ["wait", "…", "Выплата принята", "Деньги поступят на счёт обычно в течение нескольких минут."],
    COMPLETED: ["ok", "✓", "Выплата выполнена", "Деньги отправлены на ваш счёт."],
    FAILED: ["bad", "!", "Выплата не выполнена", "Обратитесь к отправителю выплаты."]
  };

  var polling = null;
  function showPayout(payout) {
    state.payout = payout;
    var view = STATUS[payout.status] || (FAILED[payout.status] ? STATUS.FAILED : STATUS.CREATED);
    $("status-icon").className = "icon icon-" + view[0];
    $("status-icon").textContent = view[1];
    $("status-title").textContent = view[2];
    $("status-text").textContent = view[3];
    $("status-icon").parentNode.setAttribute("data-status", payout.status);
    show("status");
    if (!FINAL[payout.status] && !polling) polling = setTimeout(poll, 1500);
  }

  function poll() {
    polling = null;
    call("GET", "status").then(function (answer) {
      if (answer.status === 200 && answer.data.payout) showPayout(answer.data.payout);
      else if (!linkError(answer.data)) polling = setTimeout(poll, 3000);
    }, function () { polling = setTimeout(poll, 3000); });
  }

  function setBusy(button, busy) {
    button.disabled = busy;
    button.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function createPayout(button, errorBox) {
    setBusy(button, true);
    return call("POST", "payout").then(function (answer) {
      setBusy(button, false);
      if (linkError(answer.data)) return;
      var payout = answer.data.payout;
      if (answer.status !== 200 || !payout) {
        errorBox.textContent = "Не удалось создать выплату. Попробуйте ещё раз чуть позже.";
        post("payout_failed", { externalId: state.externalId, payoutId: null });
        reportHeight();
        return;
      }
      if (answer.data.created && FAILED[payout.status]) {
        post("payout_failed", { externalId: state.externalId, payoutId: payout.id });
      } else if (answer.data.created) {
        post("payout_created", { externalId: state.externalId, payoutId: payout.id, status: payout.status });
      }
      showPayout(payout);
    }, function () { setBusy(button, false); unavailable(); });
  }

  function onSave(event) {
    event.preventDefault();
    var firstBad = checkAll();
    if (firstBad) { $(firstBad).focus(); return; }
    var button = $("save");
    setBusy(button, true);
    call("POST", "requisites", { requisites: values() }).then(function (answer) {
      setBusy(button, false);
      if (linkError(answer.data)) return;
      if (answer.status === 409 && answer.data.payout) { showPayout(answer.data.payout); return; }
      if (answer.status === 400 && answer.data.fields) {
        Object.keys(answer.data.fields).forEach(function (name) { showFieldError(name, answer.data.fields[name]); });
        reportHeight();
        return;
      }
      if (answer.status !== 200) { unavailable(); return; }
      post("requisites_saved", { externalId: state.externalId, changed: answer.data.changed });
      showAccount(answer.data.account);
      if (!editing) createPayout($("confirm"), $("confirm-error"));
    }, function () { setBusy(button, false); unavailable(); });
  }

  function onClose() {
    post("close", {});
    if (window.opener && window.parent === window) window.close();
  }

  function start() {
    if (state.amount) $("amount").textContent = rubles(state.amount);
    var list = $("bank-list");
    (state.banks || []).forEach(function (b) {
      var option = document.createElement("option");
      option.value = b.bik;
      option.label = b.name;
      option.textContent = b.name;
      list.appendChild(option);
    });
    FIELDS.forEach(function (name) {
      $(name).addEventListener("input", function () {
        checkField(name, false);
        if (name === "bik" && $("account").value) checkField("account", false);
        reportHeight();
      });
      $(name).addEventListener("blur", function () {
        if ($(name).value.trim() || name !== "birthDate") touched[name] = $(name).value !== "" || touched[name];
        checkField(name, false);
        reportHeight();
      });
    });
    $("form").addEventListener("submit", onSave);
    $("confirm").addEventListener("click", function () { createPayout($("confirm"), $("confirm-error")); });
    $("replace").addEventListener("click", function () { showForm(true); });
    $("cancel-edit").addEventListener("click", function () { showAccount(state.account); });
    $("close").addEventListener("click", onClose);
    if (window.ResizeObserver) new ResizeObserver(reportHeight).observe($("widget"));

    if (state.screen === "error") { showError(state.error); reportHeight(); return; }
    post("ready", { hasRequisites: !!state.account, payout: state.payout || null });
    if (state.screen === "status") showPayout(state.payout);
    else if (state.screen === "confirm") showAccount(state.account);
    else showForm(false);
    reportHeight();
  }

  start();
})();
